# Rules that make device code.

# The manifest of device symbols (include/devrt/symbols.def), expanded by the C
# preprocessor into a plain list: DEVRT_MANIFEST_SYMBOLS, and the file
# ${DEVRT_MANIFEST_FILE} with one name per line.
function(devrt_read_manifest)
  set(def "${PROJECT_SOURCE_DIR}/include/devrt/symbols.def")
  set(cpp "${DEVRT_CLANG}")
  if(NOT cpp)
    set(cpp "${CMAKE_C_COMPILER}") # a host-only build (DEVRT_DEVICE_CODE=OFF)
  endif()
  execute_process(
    COMMAND "${cpp}" -E -P -x c
            "-DDEVRT_FUNCTION(r,name,p)=@name@" "-DDEVRT_NORETURN(name,p)=@name@"
            "-DDEVRT_VARIABLE(t,name)=@name@" "${def}"
    OUTPUT_VARIABLE expanded RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "devrt: cannot expand ${def}")
  endif()
  string(REGEX MATCHALL "@[A-Za-z_0-9]+@" names "${expanded}")
  string(REPLACE "@" "" names "${names}")
  list(JOIN names "\n" lines)
  set(file "${PROJECT_BINARY_DIR}/devrt-symbols.txt")
  devrt_write_if_changed("${file}" "${lines}\n")
  set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${def}")
  set(DEVRT_MANIFEST_SYMBOLS "${names}" PARENT_SCOPE)
  set(DEVRT_MANIFEST_FILE "${file}" PARENT_SCOPE)
endfunction()

# devrt_add_bitcode_library(<name> TRIPLE <triple> OUTPUT <file.bc> SOURCES <c files...>
#                           [FLAGS <extra clang flags...>])
#
# Compiles C sources to LLVM bitcode for a GPU triple without choosing a processor (one
# bitcode for every gfx target), links them with llvm-link, and internalizes every symbol
# the manifest does not list, so helpers can neither clash with a user's symbols nor need
# host stubs. Adds a target <name> that builds OUTPUT.
function(devrt_add_bitcode_library name)
  cmake_parse_arguments(arg "" "TRIPLE;OUTPUT" "SOURCES;FLAGS" ${ARGN})
  # Makefile generators do not create the folders of custom commands' outputs.
  file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/${name}")
  get_filename_component(out_dir "${arg_OUTPUT}" DIRECTORY)
  file(MAKE_DIRECTORY "${out_dir}")
  # Every function may hold a convergent operation (a ballot, a barrier), so none may be
  # moved across control flow. clang 16's driver takes the flag for OpenCL and CUDA only
  # (and warns of it as unused for C), so it goes to the compiler itself there.
  set(convergent -fconvergent-functions)
  if(DEVRT_LLVM_VERSION LESS 19)
    set(convergent -Xclang -fconvergent-functions)
  endif()
  # LLVM 16's optimizer folds llvm.amdgcn.wavefrontsize to 64 where no processor is named,
  # which would make the one bitcode wave64 on wave32 GPUs too; LLVM 19 waits for the
  # kernel's target. So LLVM 16's bitcode leaves clang's output unoptimized, and the kernel's
  # own pipeline optimizes it once the target is known (docs/llvm-versions.md).
  set(optimize)
  if(DEVRT_LLVM_VERSION LESS 19 AND arg_TRIPLE MATCHES "^amdgcn")
    set(optimize -Xclang -disable-llvm-passes)
  endif()
  set(objects)
  foreach(src ${arg_SOURCES})
    get_filename_component(src "${src}" ABSOLUTE)
    file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${src}")
    string(REGEX REPLACE "[/.]" "_" stem "${rel}")
    set(obj "${CMAKE_CURRENT_BINARY_DIR}/${name}/${stem}.bc")
    add_custom_command(
      OUTPUT "${obj}"
      COMMAND "${DEVRT_CLANG}" -target ${arg_TRIPLE} -nogpulib -ffreestanding
              -fvisibility=hidden ${convergent} -std=c17 -O2
              -Wall -Wextra -Werror ${optimize} ${arg_FLAGS}
              -I "${PROJECT_SOURCE_DIR}/include" -I "${PROJECT_SOURCE_DIR}/device"
              -emit-llvm -c "${src}" -o "${obj}" -MD -MF "${obj}.d"
      DEPFILE "${obj}.d"
      DEPENDS "${src}"
      COMMENT "Compiling ${rel} for ${arg_TRIPLE}"
      VERBATIM)
    list(APPEND objects "${obj}")
  endforeach()
  add_custom_command(
    OUTPUT "${arg_OUTPUT}"
    COMMAND "${DEVRT_LLVM_LINK}" ${objects} -o "${arg_OUTPUT}.linked.bc"
    COMMAND "${DEVRT_OPT}" "-passes=internalize,globaldce"
            "-internalize-public-api-file=${DEVRT_MANIFEST_FILE}"
            "${arg_OUTPUT}.linked.bc" -o "${arg_OUTPUT}"
    DEPENDS ${objects} "${DEVRT_MANIFEST_FILE}"
    COMMENT "Linking ${name}"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS "${arg_OUTPUT}")
endfunction()
