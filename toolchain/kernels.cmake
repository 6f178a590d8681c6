# Kernel images for the backends, built from the same kernel C. These rules serve devrt's
# own build and, installed with the CMake package, its consumers (docs/integration.md):
#
#   devrt_add_emu_kernel(<name> SOURCES <files...> [DEFINES ...] [INCLUDES <dirs...>])
#   devrt_add_amdgcn_kernel(<name> SOURCES <file> TARGET <gfx...> [DEFINES ...]
#                           [INCLUDES <dirs...>])
#   devrt_add_nvptx_kernel(<name> SOURCES <files...> [ARCH <sm_NN>] [DEFINES ...]
#                          [INCLUDES <dirs...>])
#
# One vocabulary for all three: SOURCE is the same as SOURCES, and TARGET the same as ARCH
# (the GPU; the emulation runs on the host and takes neither). A word the rule does not
# know, a source that is not there, or what the rule cannot build (several sources for
# amdgcn, several ARCHs for nvptx) stops the configuration with a message naming it,
# rather than a build that fails later or leaves it out.
#
# They take the device library from the targets devrt::amdgcn_bitcode and
# devrt::nvptx_bitcode (property DEVRT_BITCODE_FILE; DEVRT_BITCODE_TARGET names the target
# that builds it, in devrt's own build), the headers from DEVRT_INCLUDE_DIR, and the LLVM
# tools from devrt_find_llvm() (toolchain/llvm.cmake), which the amdgcn and nvptx rules call.
# DEVRT_KERNEL_WARNINGS, empty unless set, holds warning options for the nvptx rule's
# compiles: devrt's own build makes its kernels' warnings errors there, while a consumer's
# kernel builds with each rule under the same flags, as the compiler's defaults give them.

# A kernel rule's arguments, checked, into arg_SOURCES, arg_GPU (TARGET and ARCH together),
# arg_DEFINES and arg_INCLUDES in the caller's scope; RULE and NAME are for the messages.
# The sources stay as the caller wrote them.
function(devrt_kernel_arguments rule name)
  set(gpu "")
  if(rule STREQUAL "devrt_add_amdgcn_kernel")
    set(usage "SOURCES <file> (or SOURCE), TARGET <gfx...> (or ARCH), DEFINES, INCLUDES")
    set(gpu "^gfx[0-9a-z]+(-[0-9a-z]+)*$")
    set(gpu_kind "a gfx target")
  elseif(rule STREQUAL "devrt_add_nvptx_kernel")
    set(usage "SOURCES <files> (or SOURCE), ARCH <sm_NN> (or TARGET), DEFINES, INCLUDES")
    set(gpu "^sm_[0-9]+[a-z]?$")
    set(gpu_kind "an sm_NN architecture")
  else()
    set(usage "SOURCES <files> (or SOURCE), DEFINES, INCLUDES")
  endif()
  set(where "${rule}(${name})")
  # A keyword may come without values: callers pass INCLUDES ${list} whatever the list holds.
  # TARGET and ARCH are parsed in every rule, so that the emulation's refusal names them
  # rather than taking them for sources.
  cmake_parse_arguments(arg "" "" "SOURCES;SOURCE;TARGET;ARCH;DEFINES;INCLUDES" ${ARGN})
  if(arg_UNPARSED_ARGUMENTS)
    list(GET arg_UNPARSED_ARGUMENTS 0 word)
    message(FATAL_ERROR "${where}: unknown word ${word}; the rule takes ${usage}")
  endif()
  set(gpus ${arg_TARGET} ${arg_ARCH})
  if(gpus AND NOT gpu)
    message(FATAL_ERROR "${where}: the emulation runs on the host, for no TARGET or ARCH; the "
                        "rule takes ${usage}")
  endif()
  # A multi-value keyword swallows the words after it, so an unknown keyword there shows up
  # as a GPU or a source that is not one.
  foreach(word ${gpus})
    if(NOT word MATCHES "${gpu}")
      message(FATAL_ERROR "${where}: ${word} is neither ${gpu_kind} nor a keyword; the rule "
                          "takes ${usage}")
    endif()
  endforeach()
  set(sources ${arg_SOURCE} ${arg_SOURCES})
  if(NOT sources)
    message(FATAL_ERROR "${where}: no SOURCES; the rule takes ${usage}")
  endif()
  foreach(source ${sources})
    get_filename_component(path "${source}" ABSOLUTE)
    get_source_file_property(generated "${source}" GENERATED)
    if(NOT EXISTS "${path}" AND NOT generated)
      message(FATAL_ERROR "${where}: ${source} is neither a source file (there is no ${path}) "
                          "nor a keyword; the rule takes ${usage}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES gpus)
  set(arg_SOURCES "${sources}" PARENT_SCOPE)
  set(arg_GPU "${gpus}" PARENT_SCOPE)
  set(arg_DEFINES "${arg_DEFINES}" PARENT_SCOPE)
  set(arg_INCLUDES "${arg_INCLUDES}" PARENT_SCOPE)
endfunction()

# The bitcode file of devrt::<kind>_bitcode in FILE_VAR, and the target that builds it
# (empty for an installed package) in TARGET_VAR.
function(devrt_bitcode kind file_var target_var)
  if(NOT TARGET devrt::${kind}_bitcode)
    message(FATAL_ERROR "devrt: no ${kind} bitcode in this build or package (devrt for LLVM "
                        "${DEVRT_LLVM_VERSION}; LLVM 16 builds no nvptx bitcode: "
                        "docs/llvm-versions.md)")
  endif()
  get_target_property(file devrt::${kind}_bitcode DEVRT_BITCODE_FILE)
  get_target_property(producer devrt::${kind}_bitcode DEVRT_BITCODE_TARGET)
  if(NOT producer)
    set(producer "")
  endif()
  set(${file_var} "${file}" PARENT_SCOPE)
  set(${target_var} "${producer}" PARENT_SCOPE)
endfunction()

# A shared object for the emulation backend: the kernels with devrt's emulation archive
# linked in, so each image has its own __devrt_state as a code object does. Output:
# <name>.so in the current binary directory.
function(devrt_add_emu_kernel name)
  devrt_kernel_arguments(devrt_add_emu_kernel ${name} ${ARGN})
  add_library(${name} MODULE ${arg_SOURCES})
  set_target_properties(${name} PROPERTIES PREFIX "" SUFFIX ".so" C_VISIBILITY_PRESET hidden)
  target_compile_definitions(${name} PRIVATE ${arg_DEFINES})
  target_include_directories(${name} PRIVATE ${arg_INCLUDES})
  target_link_libraries(${name} PRIVATE devrt::emu)
endfunction()

# The compiler's -D and -I options for a kernel's DEFINES and INCLUDES, into OUT.
function(devrt_kernel_flags out defines includes)
  set(flags)
  foreach(d ${defines})
    list(APPEND flags "-D${d}")
  endforeach()
  foreach(dir ${includes})
    list(APPEND flags -I "${dir}")
  endforeach()
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

# The language standard for a kernel SOURCE, into OUT: C17 for .c, C++17 for the C++ and
# HIP extensions, which clang compiles as those languages.
function(devrt_kernel_std out source)
  get_filename_component(extension "${source}" LAST_EXT)
  string(TOLOWER "${extension}" extension)
  if(extension MATCHES "^\\.(cc|cpp|cxx|c\\+\\+|hip)$")
    set(${out} -std=c++17 PARENT_SCOPE)
  else()
    set(${out} -std=c17 PARENT_SCOPE)
  endif()
endfunction()

# A PTX image for the CUDA backend, <name>.ptx in DEVRT_PTX_DIR (default: the current
# binary directory): the kernels compiled for nvptx64-nvidia-cuda, linked with
# devrt-nvptx.bc (only what they use), optimized as one module so the library inlines into
# them, and turned into PTX by llc. ARCH (one: the image is one file) defaults to
# DEVRT_NVPTX_ARCH, sm_90 unless set. Sets <name>_PTX in the caller's scope to the file, and
# adds the target <name> to nvptx-ptx, which builds every image.
#
# In devrt's build without device code (DEVRT_DEVICE_CODE=OFF) nothing is compiled:
# <name>_PTX is ${DEVRT_PREBUILT_PTX_DIR}/<name>.ptx when that file exists, and empty
# otherwise, so the caller can leave its tests out.
set(DEVRT_NVPTX_ARCH sm_90 CACHE STRING "The GPU that nvptx kernels are built for by default")
function(devrt_add_nvptx_kernel name)
  devrt_kernel_arguments(devrt_add_nvptx_kernel ${name} ${ARGN})
  list(LENGTH arg_GPU count)
  if(count GREATER 1)
    message(FATAL_ERROR "devrt_add_nvptx_kernel(${name}): several ARCHs (${arg_GPU}) are not "
                        "supported, as the image is one file, ${name}.ptx: call the rule once "
                        "per ARCH, under another name each")
  endif()
  set(arg_ARCH "${arg_GPU}")
  if(NOT arg_ARCH)
    set(arg_ARCH "${DEVRT_NVPTX_ARCH}")
  endif()
  if(DEFINED DEVRT_DEVICE_CODE AND NOT DEVRT_DEVICE_CODE)
    set(ptx "${DEVRT_PREBUILT_PTX_DIR}/${name}.ptx")
    if(DEVRT_PREBUILT_PTX_DIR AND EXISTS "${ptx}")
      set(${name}_PTX "${ptx}" PARENT_SCOPE)
    else()
      message(STATUS "devrt: no prebuilt ${name}.ptx; the nvptx tests that need it are left out")
      set(${name}_PTX "" PARENT_SCOPE)
    endif()
    return()
  endif()
  # devrt's own build with an LLVM too old for the nvptx library (device/CMakeLists.txt).
  if(DEVRT_DEVICE_CODE AND NOT TARGET devrt::nvptx_bitcode)
    set(${name}_PTX "" PARENT_SCOPE)
    return()
  endif()
  devrt_find_llvm()
  devrt_bitcode(nvptx bitcode producer)
  set(ptx_dir "${DEVRT_PTX_DIR}")
  if(NOT ptx_dir)
    set(ptx_dir "${CMAKE_CURRENT_BINARY_DIR}")
  endif()
  set(ptx "${ptx_dir}/${name}.ptx")
  set(work "${CMAKE_CURRENT_BINARY_DIR}/${name}.nvptx")
  file(MAKE_DIRECTORY "${work}" "${ptx_dir}")
  devrt_kernel_flags(flags "${arg_DEFINES}" "${arg_INCLUDES}")
  set(sources)
  foreach(src ${arg_SOURCES})
    get_filename_component(src "${src}" ABSOLUTE)
    list(APPEND sources "${src}")
  endforeach()
  list(REMOVE_DUPLICATES sources)
  set(objects)
  # The link steps' own files, which a source's bitcode must not overwrite.
  set(stems kernels linked optimized)
  foreach(src ${sources})
    get_filename_component(stem "${src}" NAME_WE)
    # Nor two sources of one name in different folders one bitcode file.
    if(stem IN_LIST stems)
      list(LENGTH stems count)
      set(stem "${stem}.${count}")
    endif()
    list(APPEND stems "${stem}")
    devrt_kernel_std(std "${src}")
    set(obj "${work}/${stem}.bc")
    add_custom_command(
      OUTPUT "${obj}"
      COMMAND "${DEVRT_CLANG}" -target nvptx64-nvidia-cuda -march=${arg_ARCH} -nogpulib
              -ffreestanding ${std} -O2 ${DEVRT_KERNEL_WARNINGS}
              -Xclang -target-feature -Xclang +ptx78 ${flags}
              -I "${DEVRT_INCLUDE_DIR}"
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
    COMMAND "${DEVRT_LLVM_LINK}" --only-needed "${work}/kernels.bc" "${bitcode}"
            -o "${work}/linked.bc"
    COMMAND "${DEVRT_OPT}" -O2 "${work}/linked.bc" -o "${work}/optimized.bc"
    COMMAND "${DEVRT_LLC}" -mtriple=nvptx64-nvidia-cuda -mcpu=${arg_ARCH} -mattr=+ptx78
            "${work}/optimized.bc" -o "${ptx}"
    DEPENDS ${objects} "${bitcode}"
    COMMENT "Linking ${name}.ptx"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS "${ptx}")
  if(producer)
    add_dependencies(${name} ${producer})
  endif()
  if(NOT TARGET nvptx-ptx)
    add_custom_target(nvptx-ptx)
  endif()
  add_dependencies(nvptx-ptx ${name})
  set(${name}_PTX "${ptx}" PARENT_SCOPE)
endfunction()

# An amdgcn code object built the way clang users link devrt: -mlink-builtin-bitcode makes a
# relocatable object with the library inside, and ld.lld -shared turns it into the code
# object the loader takes. One code object per TARGET: <name>.<gfx>.hsaco in the current
# binary directory, made by the target <name>_<gfx>, its path in the variables
# <name>_<gfx>_HSACO and <name>_HSACO (the last target's). SOURCES is one file, C (C17) or
# C++ (C++17) by its extension: a second object would carry a second copy of the library's
# state, so several are refused; a kernel in several files #includes the others.
function(devrt_add_amdgcn_kernel name)
  devrt_kernel_arguments(devrt_add_amdgcn_kernel ${name} ${ARGN})
  if(NOT arg_GPU)
    message(FATAL_ERROR "devrt_add_amdgcn_kernel(${name}): no TARGET (one or several gfx "
                        "targets, one code object each)")
  endif()
  list(LENGTH arg_SOURCES count)
  if(count GREATER 1)
    message(FATAL_ERROR "devrt_add_amdgcn_kernel(${name}): several sources (${arg_SOURCES}) are "
                        "not supported: each would bring its own copy of devrt's library and "
                        "state into the code object; #include them into one source")
  endif()
  devrt_find_llvm()
  devrt_bitcode(amdgcn bitcode producer)
  get_filename_component(source "${arg_SOURCES}" ABSOLUTE)
  devrt_kernel_flags(flags "${arg_DEFINES}" "${arg_INCLUDES}")
  devrt_kernel_std(std "${source}")
  foreach(target ${arg_GPU})
    set(hsaco "${CMAKE_CURRENT_BINARY_DIR}/${name}.${target}.hsaco")
    # -MQ: the depfile must name the rule's output, the code object, and not the object the
    # compile writes on the way (Ninja takes a rule whose depfile names another file as never
    # built, and Make reads no dependencies from it); -MQ, unlike -MT, escapes a space in it.
    add_custom_command(
      OUTPUT "${hsaco}"
      COMMAND "${DEVRT_CLANG}" -target amdgcn-amd-amdhsa -mcpu=${target} -nogpulib
              -ffreestanding ${std} -O2 -I "${DEVRT_INCLUDE_DIR}" ${flags}
              -Xclang -mlink-builtin-bitcode -Xclang "${bitcode}"
              -c "${source}" -o "${hsaco}.o" -MD -MF "${hsaco}.d" -MQ "${hsaco}"
      COMMAND "${DEVRT_LD_LLD}" -shared --no-undefined "${hsaco}.o" -o "${hsaco}"
      DEPFILE "${hsaco}.d"
      DEPENDS "${source}" "${bitcode}"
      COMMENT "Building ${name} for ${target}"
      VERBATIM)
    add_custom_target(${name}_${target} ALL DEPENDS "${hsaco}")
    if(producer)
      add_dependencies(${name}_${target} ${producer})
    endif()
    set(${name}_HSACO "${hsaco}" PARENT_SCOPE)
    set(${name}_${target}_HSACO "${hsaco}" PARENT_SCOPE)
  endforeach()
endfunction()
