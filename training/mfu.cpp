// mfu.cpp — Mfu.
#include "mfu.hpp"

#include <cstdio>

namespace tapegrad::training {

Mfu Mfu::measure(double flops_per_token, DType dtype, int processes, const GemmShape& shape, double seconds) {
  Mfu m;
  m.flops_per_token = flops_per_token;
  m.shape = shape;
  m.dtype = dtype;
  m.processes = processes;
  m.peak = measure_gemm_flops_per_second(dtype, shape, seconds);
  return m;
}

double Mfu::of(double tokens_per_second) const {
  const double peak_total = double(processes) * peak.flops_per_second;
  return peak_total > 0 ? flops_per_token * tokens_per_second / peak_total : 0;
}

std::string Mfu::peak_line() const {
  char line[160];
  std::snprintf(line, sizeof line, "GEMM peak: %.0f GFLOP/s (%s, %d thread%s, %s)", peak.flops_per_second / 1e9,
                dtype_name(dtype), peak.threads, peak.threads == 1 ? "" : "s", shape.str().c_str());
  return line;
}

std::string Mfu::text(double tokens_per_second) const {
  const double percent = 100 * of(tokens_per_second);
  char t[32];
  std::snprintf(t, sizeof t, percent < 10 ? "MFU %.1f%%" : "MFU %.0f%%", percent);
  return t;
}

}  // namespace tapegrad::training
