# Kernel images for the backends, built from the same kernel C.

# devrt_add_emu_kernel(<name> SOURCES <c files...> [DEFINES ...])
# A shared object for the emulation backend: the kernels with libdevrt_emu linked in, so
# each image has its own __devrt_state like a code object does. Output: <name>.so.
function(devrt_add_emu_kernel name)
  cmake_parse_arguments(arg "" "" "SOURCES;DEFINES" ${ARGN})
  add_library(${name} MODULE ${arg_SOURCES})
  set_target_properties(${name} PROPERTIES PREFIX "" SUFFIX ".so" C_VISIBILITY_PRESET hidden)
  target_compile_definitions(${name} PRIVATE ${arg_DEFINES})
  target_link_libraries(${name} PRIVATE devrt_emu)
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/device")
endfunction()
