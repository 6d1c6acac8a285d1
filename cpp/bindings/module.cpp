// gpuprims._C: the only C++ that knows Python. Makes no CUDA call at import, so it imports (and
// stubgen runs) on machines without a GPU.
#include <nanobind/nanobind.h>
#include <nanobind/stl/tuple.h>

#include <cuda_runtime_api.h>

#include "device_array.hpp"
#include "gpuprims/core/stream.hpp"
#include "imported_array.hpp"
#include "raise.hpp"

namespace nb = nanobind;

namespace gpuprims {
void bind_reduce(nb::module_& m);
void bind_norms(nb::module_& m);
void bind_scan(nb::module_& m);
void bind_histogram(nb::module_& m);
void bind_gemm(nb::module_& m);
void bind_transpose(nb::module_& m);
void bind_topk(nb::module_& m);
void bind_torch_bridge(nb::module_& m);
}

NB_MODULE(_C, m) {
  using namespace gpuprims;
  m.doc() = "gpuprims native module: kernels and the CPU reference behind the Python API";
  register_exceptions(m);
  bind_imported_array(m);
  bind_device_array(m);
  bind_reduce(m);
  bind_norms(m);
  bind_scan(m);
  bind_histogram(m);
  bind_gemm(m);
  bind_transpose(m);
  bind_topk(m);
  bind_torch_bridge(m);

  m.def("cuda_device_count", [] {
    int n = 0;
    // No driver or no device is not an error here: the CPU reference serves.
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return n;
  }, "Number of visible CUDA devices; 0 when there is no driver or device.");

  m.def("device_capability", [](int device) {
    int major = 0, minor = 0;
    throw_if_error(cuda_status(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                               "device_capability", "cudaDeviceGetAttribute"));
    throw_if_error(cuda_status(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
                               "device_capability", "cudaDeviceGetAttribute"));
    return std::make_tuple(major, minor);
  }, nb::arg("device"));

  m.def("dram_gbps_per_sm", [](int device) {
    double gbps = 0.0;
    throw_if_error(dram_gbps_per_sm(device, &gbps));
    return gbps;
  }, nb::arg("device"),
     "Peak DRAM bandwidth per multiprocessor in GB/s, as the dispatch rules read it (0 where the driver "
     "reports none; benchmarks record it).");

  m.def("synchronize", [](int device) {
    call_without_gil([&]() -> Status {
      DeviceGuard guard;  // the device's context for the wait, the caller's current device after
      GPUPRIMS_TRY(guard.enter(device, "synchronize"));
      GPUPRIMS_CUDA_CHECK("synchronize", cudaDeviceSynchronize());
      return Status::ok();
    });
  }, nb::arg("device") = 0, "Waits for all work on a device (tests and benchmarks only).");
}
