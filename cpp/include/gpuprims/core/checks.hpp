#pragma once
// Argument checks every family's dispatch shares.
#include <string>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"

namespace gpuprims {

// The array's address is a multiple of its element size (kernels index it as T*). Error:
// "<op>: argument '<arg>': expected an address aligned to its 4-byte float32 elements, ...".
Status check_element_aligned(const char* op, const TensorView& v, const char* arg);

// `out` shares no byte with `in`, or (in_place_ok) is `in` itself: same address, element size,
// shape and strides, for ops that read each element before writing it. Kernels read `in` while
// other threads write `out`, so any other overlap (out = x[1:] of x[:-1], x[::-1] of x) silently
// gives wrong values. The check is host arithmetic on the views (no device access): disjoint address
// ranges pass, and so do interleaved views of one shape and strides that share no element (x[:, :d]
// and x[:, d:], x[::2] and x[1::2]); other interleavings are refused (conservative). Error:
// "<op>: arguments '<in_arg>' and '<out_arg>': expected ... got overlapping memory".
Status check_no_overlap(const char* op, const TensorView& in, const char* in_arg, const TensorView& out,
                        const char* out_arg, bool in_place_ok);

// No two elements of an output share an address: a zero stride on a dimension longer than 1 (a
// broadcast view, torch's expand) would make threads race on one element. Error: "<op>: argument
// '<arg>': expected distinct elements, got a zero stride".
Status check_distinct_elements(const char* op, const TensorView& out, const char* arg);

// `v` is on `first`'s device. Error: "<op>: arguments '<first_arg>' and '<arg>' must be on the same
// device, got <first_arg> on cuda:1 and <arg> on cuda:0".
Status check_same_device(const char* op, const TensorView& first, const char* first_arg, const TensorView& v,
                         const char* arg);

// The start of every argument error message: "<op>: argument '<arg>': ".
std::string arg_error_prefix(const char* op, const char* arg);

}  // namespace gpuprims
