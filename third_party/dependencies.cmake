# Where each dependency comes from; see third_party/README.md. Nothing is vendored.

# nanobind: the PyPI package (a build requirement in pyproject.toml).
function(gpuprims_find_nanobind)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
    OUTPUT_STRIP_TRAILING_WHITESPACE OUTPUT_VARIABLE nanobind_ROOT RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nanobind not found for ${Python_EXECUTABLE}: pip install nanobind")
  endif()
  find_package(nanobind CONFIG REQUIRED PATHS "${nanobind_ROOT}" NO_DEFAULT_PATH)
endfunction()

# CUTLASS / CuTe: the headers inside the pinned PyPI wheel nvidia-cutlass==4.2.0.0
# (cutlass_library/source/include). Used only by cpp/cutlass_ext, which later issues add.
# find_spec locates the package without running its heavy __init__.
function(gpuprims_find_cutlass out_var)
  if(GPUPRIMS_CUTLASS_INCLUDE_DIR)
    set(dir "${GPUPRIMS_CUTLASS_INCLUDE_DIR}")
  else()
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -c
        "import importlib.util as u, os; s = u.find_spec('cutlass_library'); print(os.path.join(s.submodule_search_locations[0], 'source', 'include') if s else '')"
      OUTPUT_STRIP_TRAILING_WHITESPACE OUTPUT_VARIABLE dir)
  endif()
  if(NOT EXISTS "${dir}/cutlass/cutlass.h")
    message(FATAL_ERROR "CUTLASS headers not found (looked in '${dir}'): pip install nvidia-cutlass==4.2.0.0 "
                        "or set GPUPRIMS_CUTLASS_INCLUDE_DIR")
  endif()
  set(${out_var} "${dir}" PARENT_SCOPE)
endfunction()
