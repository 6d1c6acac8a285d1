#pragma once
// Adapters from a ReduceLaunch to the templated host drivers of the multi-pass and atomic rungs, so
// each variant's translation unit only names its strategy.
#include "gpuprims/reduce/reduce_atomic.cuh"
#include "gpuprims/reduce/reduce_multipass.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace reduce_detail {

template <class Strategy>
struct MultipassRunner {
  template <class T, class Acc, class Op>
  struct type {
    static Status run(const ReduceLaunch& a) {
      return run_multipass<Strategy, T, Acc, Op>(static_cast<const T*>(a.in), a.layout, a.out, a.out_dtype,
                                                  a.device, a.stream, "reduce");
    }
  };
};

template <AtomicScheme kScheme>
struct AtomicRunner {
  template <class T, class Acc, class Op>
  struct type {
    static Status run(const ReduceLaunch& a) {
      return run_atomic<kScheme, T, Acc, Op>(static_cast<const T*>(a.in), a.layout, a.out, a.out_dtype,
                                             a.device, a.sm_count, a.stream, "reduce");
    }
  };
};

}  // namespace reduce_detail
}  // namespace gpuprims
