#pragma once
// algorithm= of every op family: "auto", or one of the family's named variants (a table of rows with
// `algorithm` and `name`), else a ValueError naming the op, the argument and every accepted name.
#include <string>
#include <vector>

#include "gpuprims/core/error.hpp"

namespace gpuprims {

template <class Algorithm, class Row>
Status parse_variant_name(const std::string& op, const std::vector<Row>& variants, const std::string& name,
                          Algorithm* out) {
  if (name == "auto") {
    *out = Algorithm::kAuto;
    return Status::ok();
  }
  std::string names = "'auto'";
  for (const Row& v : variants) {
    if (name == v.name) {
      *out = static_cast<Algorithm>(v.algorithm);
      return Status::ok();
    }
    names += std::string(", '") + v.name + "'";
  }
  return value_error(op + ": argument 'algorithm': expected one of " + names + ", got '" + name + "'");
}

}  // namespace gpuprims
