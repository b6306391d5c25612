// scripts/probes/rate_params.cuh -- the parameters of the tensor-pipe rate probes (wgmma_rate.cuh,
// mma_sync_rate.cuh); scripts/gpu_wgmma_rate.py's RateParams mirrors them.
#pragma once

namespace humming {

struct RateParams {
  float* sink;        // written only when the accumulators' sum equals `never`
  long long* spans;   // one clock64 span per CTA
  int iters;
  float never;
};

}  // namespace humming
