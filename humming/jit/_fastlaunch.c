/* humming's native launch entry: cuLaunchKernel without ctypes' argument
 * conversion. Built on first use by humming/jit/native.py with the system C
 * compiler (optional: without one, the launch path stays on ctypes).
 *
 *   set_entry(address of cuLaunchKernel)
 *   launch(fn, gx, gy, gz, bx, by, bz, smem, stream, args) -> CUresult (int)
 *
 * Every argument is a Python int; `args` is the address of the kernel's void*[]
 * argument array (prepared once by LaunchPlan). The GIL stays held: the driver
 * call only queues work. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef int (*launch_fn_t)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                           unsigned smem, void *stream, void **params, void **extra);

static launch_fn_t entry = NULL;

static PyObject *set_entry(PyObject *self, PyObject *arg) {
  void *p = PyLong_AsVoidPtr(arg);
  if (p == NULL) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "set_entry: null address for cuLaunchKernel");
    return NULL;
  }
  entry = (launch_fn_t)p;
  Py_RETURN_NONE;
}

static PyObject *launch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  unsigned dims[7];
  void *fn, *stream, *params;
  Py_ssize_t i;
  if (nargs != 10) {
    PyErr_Format(PyExc_TypeError, "launch: expected 10 arguments (fn, gx, gy, gz, bx, by, bz, smem, stream, "
                                  "args), got %zd", nargs);
    return NULL;
  }
  if (entry == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "launch: set_entry() was not called");
    return NULL;
  }
  fn = PyLong_AsVoidPtr(args[0]);
  for (i = 0; i < 7; ++i) dims[i] = (unsigned)PyLong_AsUnsignedLong(args[1 + i]);
  stream = args[8] == Py_None ? NULL : PyLong_AsVoidPtr(args[8]);
  params = PyLong_AsVoidPtr(args[9]);
  if (PyErr_Occurred()) return NULL;
  if (fn == NULL || params == NULL) {
    PyErr_SetString(PyExc_ValueError, "launch: null function or argument array");
    return NULL;
  }
  return PyLong_FromLong(entry(fn, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], dims[6], stream,
                               (void **)params, NULL));
}

static PyMethodDef methods[] = {
    {"set_entry", (PyCFunction)set_entry, METH_O, "set_entry(address): the cuLaunchKernel to call"},
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "launch(fn, gx, gy, gz, bx, by, bz, smem, stream, args) -> CUresult"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, HUMMING_MODULE_NAME, NULL, -1, methods};

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
PyMODINIT_FUNC CAT(PyInit_, HUMMING_MODULE_SYMBOL)(void) { return PyModule_Create(&module); }
