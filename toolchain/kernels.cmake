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

# devrt_add_nvptx_kernel(<name> SOURCES <c files...> [ARCH <sm_NN>] [DEFINES ...])
# A PTX image for the CUDA backend, ${DEVRT_PTX_DIR}/<name>.ptx: the kernels compiled for
# nvptx64-nvidia-cuda, linked with devrt-nvptx.bc (only what they use), optimized as one
# module so the library inlines into them, and turned into PTX by llc. ARCH defaults to
# DEVRT_NVPTX_ARCH. Sets <name>_PTX in the caller's scope to the file, and adds the target
# <name> to nvptx-ptx, which builds every image.
#
# Without device code (DEVRT_DEVICE_CODE=OFF) nothing is compiled: <name>_PTX is
# ${DEVRT_PREBUILT_PTX_DIR}/<name>.ptx when that file exists, and empty otherwise, so the
# caller can leave its tests out.
set(DEVRT_NVPTX_ARCH sm_90 CACHE STRING "The GPU the nvptx test kernels are built for")
function(devrt_add_nvptx_kernel name)
  cmake_parse_arguments(arg "" "ARCH" "SOURCES;DEFINES" ${ARGN})
  if(NOT arg_ARCH)
    set(arg_ARCH "${DEVRT_NVPTX_ARCH}")
  endif()
  if(NOT DEVRT_DEVICE_CODE)
    set(ptx "${DEVRT_PREBUILT_PTX_DIR}/${name}.ptx")
    if(DEVRT_PREBUILT_PTX_DIR AND EXISTS "${ptx}")
      set(${name}_PTX "${ptx}" PARENT_SCOPE)
    else()
      message(STATUS "devrt: no prebuilt ${name}.ptx; the nvptx tests that need it are left out")
      set(${name}_PTX "" PARENT_SCOPE)
    endif()
    return()
  endif()
  set(ptx "${DEVRT_PTX_DIR}/${name}.ptx")
  set(work "${CMAKE_CURRENT_BINARY_DIR}/${name}.nvptx")
  set(defines)
  foreach(d ${arg_DEFINES})
    list(APPEND defines "-D${d}")
  endforeach()
  set(objects)
  foreach(src ${arg_SOURCES})
    get_filename_component(src "${src}" ABSOLUTE)
    get_filename_component(stem "${src}" NAME_WE)
    set(obj "${work}/${stem}.bc")
    add_custom_command(
      OUTPUT "${obj}"
      COMMAND "${DEVRT_CLANG}" -target nvptx64-nvidia-cuda -march=${arg_ARCH} -nogpulib
              -ffreestanding -std=c17 -O2 -Wall -Wextra -Werror
              -Xclang -target-feature -Xclang +ptx78 ${defines}
              -I "${PROJECT_SOURCE_DIR}/include" -I "${PROJECT_SOURCE_DIR}/device"
              -emit-llvm -c "${src}" -o "${obj}" -MD -MF "${obj}.d"
      DEPFILE "${obj}.d"
      DEPENDS "${src}"
      COMMENT "Compiling ${stem} for nvptx (${arg_ARCH})"
      VERBATIM)
    list(APPEND objects "${obj}")
  endforeach()
  add_custom_command(
    OUTPUT "${ptx}"
    COMMAND "${DEVRT_LLVM_LINK}" ${objects} -o "${work}/kernels.bc"
    COMMAND "${DEVRT_LLVM_LINK}" --only-needed "${work}/kernels.bc" "${DEVRT_NVPTX_BC}"
            -o "${work}/linked.bc"
    COMMAND "${DEVRT_OPT}" -O2 "${work}/linked.bc" -o "${work}/optimized.bc"
    COMMAND "${DEVRT_LLC}" -mtriple=nvptx64-nvidia-cuda -mcpu=${arg_ARCH} -mattr=+ptx78
            "${work}/optimized.bc" -o "${ptx}"
    DEPENDS ${objects} devrt-nvptx "${DEVRT_NVPTX_BC}"
    COMMENT "Linking ${name}.ptx"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS "${ptx}")
  if(NOT TARGET nvptx-ptx)
    add_custom_target(nvptx-ptx)
  endif()
  add_dependencies(nvptx-ptx ${name})
  set(${name}_PTX "${ptx}" PARENT_SCOPE)
endfunction()

# devrt_add_amdgcn_kernel(<name> SOURCE <c file> TARGET <gfx...> [INCLUDES <dirs...>])
# An amdgcn code object built the way clang users link devrt (-mlink-builtin-bitcode).
# Output: ${CMAKE_CURRENT_BINARY_DIR}/<name>.<gfx>.hsaco, in the variable <name>_HSACO.
function(devrt_add_amdgcn_kernel name)
  cmake_parse_arguments(arg "" "SOURCE;TARGET" "INCLUDES" ${ARGN})
  set(hsaco "${CMAKE_CURRENT_BINARY_DIR}/${name}.${arg_TARGET}.hsaco")
  set(includes)
  foreach(dir ${arg_INCLUDES})
    list(APPEND includes -I "${dir}")
  endforeach()
  add_custom_command(
    OUTPUT "${hsaco}"
    COMMAND "${DEVRT_CLANG}" -target amdgcn-amd-amdhsa -mcpu=${arg_TARGET} -nogpulib
            -ffreestanding -std=c17 -O2 -I "${PROJECT_SOURCE_DIR}/include" ${includes}
            -Xclang -mlink-builtin-bitcode -Xclang "${DEVRT_AMDGCN_BC}"
            -c "${arg_SOURCE}" -o "${hsaco}.o" -MD -MF "${hsaco}.d"
    COMMAND "${DEVRT_LD_LLD}" -shared --no-undefined "${hsaco}.o" -o "${hsaco}"
    DEPFILE "${hsaco}.d"
    DEPENDS "${arg_SOURCE}" devrt-amdgcn "${DEVRT_AMDGCN_BC}"
    COMMENT "Building ${name} for ${arg_TARGET}"
    VERBATIM)
  add_custom_target(${name}_${arg_TARGET} ALL DEPENDS "${hsaco}")
  set(${name}_HSACO "${hsaco}" PARENT_SCOPE)
endfunction()
