# Finds the LLVM tools that make device code, all of one LLVM version. Installed with the
# CMake package, so consumers' kernel rules find the same tools.
#
#   DEVRT_LLVM_VERSION  the major version to use (default 19: the bitcode's own version;
#                       an older LLVM cannot read it)
#   DEVRT_LLVM_ROOT     a directory to look in first (default /usr/lib/llvm-<version>/bin)
#
# devrt_find_llvm() sets DEVRT_CLANG, DEVRT_LLVM_LINK, DEVRT_OPT, DEVRT_LLC, DEVRT_LD_LLD,
# DEVRT_LLVM_NM, DEVRT_LLVM_OBJDUMP, DEVRT_LLVM_READELF, DEVRT_LLVM_DIS and DEVRT_LLVM_AR
# (cache variables), or stops with a message that says what is missing and how to get it.

set(DEVRT_LLVM_VERSION 19 CACHE STRING "Major version of the LLVM that compiles device code")
set(DEVRT_LLVM_ROOT "/usr/lib/llvm-${DEVRT_LLVM_VERSION}/bin"
    CACHE PATH "Directory searched first for clang, llvm-link, opt and ld.lld")

function(devrt_find_llvm)
  if(DEVRT_LLVM_CHECKED STREQUAL "${DEVRT_LLVM_VERSION};${DEVRT_LLVM_ROOT}")
    return()
  endif()
  foreach(tool clang llvm-link opt llc ld.lld llvm-nm llvm-objdump llvm-readelf llvm-dis llvm-ar)
    string(TOUPPER "${tool}" var)
    string(REGEX REPLACE "[-.]" "_" var "DEVRT_${var}")
    find_program(${var} NAMES ${tool} PATHS "${DEVRT_LLVM_ROOT}" NO_DEFAULT_PATH)
    find_program(${var} NAMES ${tool}-${DEVRT_LLVM_VERSION})
    if(NOT ${var})
      message(FATAL_ERROR
        "devrt: ${tool} of LLVM ${DEVRT_LLVM_VERSION} not found (looked in ${DEVRT_LLVM_ROOT} "
        "and for ${tool}-${DEVRT_LLVM_VERSION} on PATH). On Debian 12 install clang-19, "
        "lld-19 and llvm-19 (devrt's toolchain/setup.sh does), or set DEVRT_LLVM_ROOT to the "
        "directory that holds it.")
    endif()
  endforeach()

  # Every tool must be of the requested version: bitcode from a newer LLVM does not load in
  # an older one, and mixed versions fail late and obscurely.
  foreach(var DEVRT_CLANG DEVRT_LLVM_LINK DEVRT_OPT DEVRT_LD_LLD)
    execute_process(COMMAND "${${var}}" --version OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT out MATCHES "(version|LLD) ([0-9]+)\\.[0-9]+")
      message(FATAL_ERROR "devrt: cannot tell the version of ${${var}}: ${out}")
    endif()
    if(NOT CMAKE_MATCH_2 STREQUAL DEVRT_LLVM_VERSION)
      message(FATAL_ERROR
        "devrt: ${${var}} is LLVM ${CMAKE_MATCH_2}, but devrt is built with LLVM "
        "${DEVRT_LLVM_VERSION}. Point DEVRT_LLVM_ROOT at LLVM ${DEVRT_LLVM_VERSION}'s bin "
        "directory, or set DEVRT_LLVM_VERSION to match.")
    endif()
  endforeach()
  message(STATUS "devrt: device code with LLVM ${DEVRT_LLVM_VERSION} (${DEVRT_CLANG})")
  set(DEVRT_LLVM_CHECKED "${DEVRT_LLVM_VERSION};${DEVRT_LLVM_ROOT}" CACHE INTERNAL "")
endfunction()
