// cub::DeviceHistogram::HistogramEven, the histogram peer (benchmarks only). Its bin rule is
// CUB's (bin = (sample - lower) * bins / (upper - lower), half-open [lower, upper)), not numpy's.
#include <cub/device/device_histogram.cuh>

#include "cub_ref.hpp"

namespace gpuprims {
namespace cub_ref {
namespace {

template <class T, class Level>
cudaError_t even(const void* in, int* counts, int bins, Level lower, Level upper, int64_t n, void* temp,
                 size_t* temp_bytes, cudaStream_t stream) {
  return cub::DeviceHistogram::HistogramEven(temp, *temp_bytes, static_cast<const T*>(in), counts, bins + 1, lower,
                                             upper, n, stream);
}

}  // namespace

cudaError_t histogram_even(const std::string& dtype, const void* in, int* counts, int bins, double lower, double upper,
                           int64_t n, void* temp, size_t* temp_bytes, cudaStream_t stream) {
  if (dtype == "uint8") {
    return even<uint8_t, int>(in, counts, bins, static_cast<int>(lower), static_cast<int>(upper), n, temp, temp_bytes,
                              stream);
  }
  if (dtype == "float32") {
    return even<float, float>(in, counts, bins, static_cast<float>(lower), static_cast<float>(upper), n, temp,
                              temp_bytes, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace cub_ref
}  // namespace gpuprims
