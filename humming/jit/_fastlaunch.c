/* humming's native launch entry: cuLaunchKernel without ctypes' argument
 * conversion. Built on first use by humming/jit/native.py with the system C
 * compiler (optional: without one, the launch path stays on ctypes).
 *
 *   set_entry(address of cuLaunchKernel)
 *   launch(fn, gx, gy, gz, bx, by, bz, smem, stream, args) -> CUresult (int)
 *   set_entry_ex(address of cuLaunchKernelEx)
 *   launch_pdl(fn, gx, gy, gz, bx, by, bz, smem, stream, args) -> CUresult (int): the same launch with
 *     programmatic stream serialization allowed (programmatic dependent launch, sm_90+)
 *   launch_ex(fn, gx, gy, gz, bx, by, bz, smem, stream, args, pdl, cz) -> CUresult (int): cuLaunchKernelEx
 *     with programmatic stream serialization if `pdl` and clusters of 1 x 1 x `cz` CTAs if cz > 1 (sm_90+)
 *
 * Every argument is a Python int; `args` is the address of the kernel's void*[]
 * argument array (prepared once by LaunchPlan). The GIL stays held: the driver
 * call only queues work. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

typedef int (*launch_fn_t)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                           unsigned smem, void *stream, void **params, void **extra);

static launch_fn_t entry = NULL;

/* cuda.h's CUlaunchAttribute (an id, padding to 8, a 64-byte value union) and CUlaunchConfig */
typedef struct {
  int id;
  char pad[4];
  union {
    char raw[64];
    void *align;
    int i;
    unsigned dim[3];
  } value;
} launch_attr_t;
typedef struct {
  unsigned gx, gy, gz, bx, by, bz, smem;
  void *stream;
  launch_attr_t *attrs;
  unsigned nattrs;
} launch_config_t;
typedef int (*launch_ex_fn_t)(const launch_config_t *config, void *f, void **params, void **extra);
#define ATTR_CLUSTER_DIMENSION 4
#define ATTR_PROGRAMMATIC_STREAM_SERIALIZATION 6
static launch_ex_fn_t entry_ex = NULL;

/* the function address in `arg` (a Python int), or NULL with a Python error naming `what` */
static void *entry_address(PyObject *arg, const char *what) {
  void *p = PyLong_AsVoidPtr(arg);
  if (p == NULL && !PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: null address", what);
  return p;
}

static PyObject *set_entry(PyObject *self, PyObject *arg) {
  void *p = entry_address(arg, "set_entry (cuLaunchKernel)");
  if (p == NULL) return NULL;
  entry = (launch_fn_t)p;
  Py_RETURN_NONE;
}

static PyObject *set_entry_ex(PyObject *self, PyObject *arg) {
  void *p = entry_address(arg, "set_entry_ex (cuLaunchKernelEx)");
  if (p == NULL) return NULL;
  entry_ex = (launch_ex_fn_t)p;
  Py_RETURN_NONE;
}

/* the first ten arguments of launch(), launch_pdl() and launch_ex() (`nargs` of them expected); 0 on success
 * (else a Python error is set) */
static int parse(const char *name, PyObject *const *args, Py_ssize_t nargs, void **fn, unsigned *dims, void **stream,
                 void **params, Py_ssize_t expected) {
  Py_ssize_t i;
  if (nargs != expected) {
    if (expected == 12) {
      PyErr_Format(PyExc_TypeError, "%s: expected 12 arguments (fn, gx, gy, gz, bx, by, bz, smem, stream, args, pdl, "
                                    "cz), got %zd", name, nargs);
      return -1;
    }
    PyErr_Format(PyExc_TypeError, "%s: expected 10 arguments (fn, gx, gy, gz, bx, by, bz, smem, stream, args), "
                                  "got %zd", name, nargs);
    return -1;
  }
  *fn = PyLong_AsVoidPtr(args[0]);
  for (i = 0; i < 7; ++i) dims[i] = (unsigned)PyLong_AsUnsignedLong(args[1 + i]);
  *stream = args[8] == Py_None ? NULL : PyLong_AsVoidPtr(args[8]);
  *params = PyLong_AsVoidPtr(args[9]);
  if (PyErr_Occurred()) return -1;
  if (*fn == NULL || *params == NULL) {
    PyErr_Format(PyExc_ValueError, "%s: null function or argument array", name);
    return -1;
  }
  return 0;
}

static PyObject *launch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  unsigned dims[7];
  void *fn, *stream, *params;
  if (entry == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "launch: set_entry() was not called");
    return NULL;
  }
  if (parse("launch", args, nargs, &fn, dims, &stream, &params, 10)) return NULL;
  return PyLong_FromLong(entry(fn, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], dims[6], stream,
                               (void **)params, NULL));
}

static PyObject *launch_pdl(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  unsigned dims[7];
  void *fn, *stream, *params;
  launch_attr_t attr;
  launch_config_t cfg;
  if (entry_ex == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "launch_pdl: set_entry_ex() was not called");
    return NULL;
  }
  if (parse("launch_pdl", args, nargs, &fn, dims, &stream, &params, 10)) return NULL;
  memset(&attr, 0, sizeof(attr));
  attr.id = ATTR_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.i = 1;
  cfg.gx = dims[0], cfg.gy = dims[1], cfg.gz = dims[2], cfg.bx = dims[3], cfg.by = dims[4], cfg.bz = dims[5];
  cfg.smem = dims[6], cfg.stream = stream, cfg.attrs = &attr, cfg.nattrs = 1;
  return PyLong_FromLong(entry_ex(&cfg, fn, (void **)params, NULL));
}

static PyObject *launch_ex(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  unsigned dims[7], n = 0;
  void *fn, *stream, *params;
  long pdl, cz;
  launch_attr_t attrs[2];
  launch_config_t cfg;
  if (entry_ex == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "launch_ex: set_entry_ex() was not called");
    return NULL;
  }
  if (parse("launch_ex", args, nargs, &fn, dims, &stream, &params, 12)) return NULL;
  pdl = PyLong_AsLong(args[10]);
  cz = PyLong_AsLong(args[11]);
  if (PyErr_Occurred()) return NULL;
  memset(attrs, 0, sizeof(attrs));
  if (pdl) {
    attrs[n].id = ATTR_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[n++].value.i = 1;
  }
  if (cz > 1) {
    attrs[n].id = ATTR_CLUSTER_DIMENSION;
    attrs[n].value.dim[0] = 1, attrs[n].value.dim[1] = 1, attrs[n++].value.dim[2] = (unsigned)cz;
  }
  cfg.gx = dims[0], cfg.gy = dims[1], cfg.gz = dims[2], cfg.bx = dims[3], cfg.by = dims[4], cfg.bz = dims[5];
  cfg.smem = dims[6], cfg.stream = stream, cfg.attrs = attrs, cfg.nattrs = n;
  return PyLong_FromLong(entry_ex(&cfg, fn, (void **)params, NULL));
}

static PyMethodDef methods[] = {
    {"set_entry", (PyCFunction)set_entry, METH_O, "set_entry(address): the cuLaunchKernel to call"},
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "launch(fn, gx, gy, gz, bx, by, bz, smem, stream, args) -> CUresult"},
    {"set_entry_ex", (PyCFunction)set_entry_ex, METH_O, "set_entry_ex(address): the cuLaunchKernelEx to call"},
    {"launch_pdl", (PyCFunction)(void (*)(void))launch_pdl, METH_FASTCALL,
     "launch_pdl(fn, gx, gy, gz, bx, by, bz, smem, stream, args) -> CUresult (programmatic dependent launch)"},
    {"launch_ex", (PyCFunction)(void (*)(void))launch_ex, METH_FASTCALL,
     "launch_ex(fn, gx, gy, gz, bx, by, bz, smem, stream, args, pdl, cz) -> CUresult (programmatic dependent "
     "launch if pdl, clusters of 1 x 1 x cz CTAs if cz > 1)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, HUMMING_MODULE_NAME, NULL, -1, methods};

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
PyMODINIT_FUNC CAT(PyInit_, HUMMING_MODULE_SYMBOL)(void) { return PyModule_Create(&module); }
