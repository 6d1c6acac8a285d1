#pragma once
// gpuprims.variants(op)'s rows from a family's variant table (any row type with name, description
// and deterministic): (name, description, deterministic) tuples for Python.
#include <string>
#include <tuple>
#include <vector>

namespace gpuprims {

template <class Row>
std::vector<std::tuple<std::string, std::string, bool>> variant_rows(const std::vector<Row>& table) {
  std::vector<std::tuple<std::string, std::string, bool>> rows;
  for (const Row& v : table) rows.emplace_back(v.name, v.description, v.deterministic);
  return rows;
}

}  // namespace gpuprims
