# What `cmake --install` and `cpack` give users: headers, libraries, tools and bitcode, the
# CMake package (lib/cmake/devrt), pkg-config files, the licence. docs/integration.md shows
# how each is used.
include(CMakePackageConfigHelpers)

set(cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/devrt")
set(pc_dir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
# The folder of the bitcode folders, one per LLVM (device/CMakeLists.txt).
set(DEVRT_BITCODE_ROOT "${CMAKE_INSTALL_LIBDIR}/devrt")
set(doc_dir "${CMAKE_INSTALL_DATADIR}/doc/devrt")

install(DIRECTORY include/devrt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# CHANGES.md too: the README links it, and says where the version's changes are.
install(FILES LICENSE README.md CHANGES.md DESTINATION ${doc_dir})
# The documents beside the README, where its links point (docs/...).
install(DIRECTORY docs/ DESTINATION ${doc_dir}/docs)
# The examples the README and docs/integration.md build, each a project of its own against
# the installed package, so that a user of the package alone can build them too.
install(DIRECTORY examples/ DESTINATION ${doc_dir}/examples)
install(FILES LICENSE DESTINATION ${doc_dir} RENAME copyright)

# pkg-config files find their prefix relative to themselves, so an unpacked package works
# wherever it lies (PKG_CONFIG_PATH=<root>/<libdir>/pkgconfig).
file(RELATIVE_PATH DEVRT_PC_TO_PREFIX "/prefix/${pc_dir}" "/prefix")
string(REGEX REPLACE "/$" "" DEVRT_PC_TO_PREFIX "${DEVRT_PC_TO_PREFIX}")
get_property(DEVRT_HAVE_EMU GLOBAL PROPERTY DEVRT_HAVE_EMU)
if(NOT DEVRT_HAVE_EMU)
  set(DEVRT_HAVE_EMU 0)
endif()
get_property(DEVRT_HAVE_AMDGPU_METADATA GLOBAL PROPERTY DEVRT_HAVE_AMDGPU_METADATA)
if(NOT DEVRT_HAVE_AMDGPU_METADATA)
  set(DEVRT_HAVE_AMDGPU_METADATA 0)
endif()
# The static runtime's libraries by name, not as Requires.private: pkg-config checks that
# every required package's .pc file is there even without --static, and those come with
# the -dev packages, which a machine that only links the shared runtime need not have.
set(DEVRT_PC_LIBS_PRIVATE "")
if(DEVRT_HAVE_EMU)
  string(APPEND DEVRT_PC_LIBS_PRIVATE " -lffi")
endif()
if(DEVRT_HAVE_AMDGPU_METADATA)
  string(APPEND DEVRT_PC_LIBS_PRIVATE " -lelf -lmsgpackc")
endif()
install(EXPORT devrt-targets NAMESPACE devrt:: FILE devrtTargets.cmake DESTINATION ${cmake_dir})
configure_package_config_file(toolchain/package/devrtConfig.cmake.in
  "${PROJECT_BINARY_DIR}/package/devrtConfig.cmake"
  INSTALL_DESTINATION ${cmake_dir}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR DEVRT_BITCODE_ROOT)
# A major version is one libdevrt ABI (SOVERSION, docs/abi-policy.md): a program written
# for 1.0 builds against any 1.x.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/package/devrtConfigVersion.cmake"
  COMPATIBILITY SameMajorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/package/devrtConfig.cmake"
  "${PROJECT_BINARY_DIR}/package/devrtConfigVersion.cmake"
  DESTINATION ${cmake_dir})
install(FILES toolchain/llvm.cmake DESTINATION ${cmake_dir} RENAME devrtLLVM.cmake)
install(FILES toolchain/kernels.cmake DESTINATION ${cmake_dir} RENAME devrtKernels.cmake)

# The bitcode variables of the .pc files name only what this build installs: LLVM 16 makes
# no nvptx bitcode, and a build without device code none at all (then they are empty).
foreach(kind amdgcn nvptx)
  string(TOUPPER "${kind}" upper)
  set(DEVRT_PC_${upper}_BITCODE "")
  if(TARGET devrt_${kind}_bitcode)
    set(DEVRT_PC_${upper}_BITCODE "\${libdir}/devrt/llvm-${DEVRT_LLVM_VERSION}/devrt-${kind}.bc")
  endif()
endforeach()
configure_file(toolchain/package/devrt.pc.in "${PROJECT_BINARY_DIR}/package/devrt.pc" @ONLY)
foreach(archive host_stubs shield emu)
  if(archive STREQUAL host_stubs)
    set(pc_name devrt-host-stubs)
    set(pc_library devrt_host)
    set(pc_cflags "")
    set(pc_description "Trapping host definitions of every devrt device function, for host images")
  elseif(archive STREQUAL shield)
    set(pc_name devrt-shield)
    set(pc_library devrt_shield)
    set(pc_cflags "")
    set(pc_description "Trapping host definitions of foreign device symbols (llvm.amdgcn.*, julia.gpu.*)")
  else()
    set(pc_name devrt-emu)
    set(pc_library devrt_emu)
    set(pc_cflags " -DDEVRT_EMU")
    set(pc_description "The devrt device library for kernel images of the host emulation backend")
  endif()
  configure_file(toolchain/package/devrt-archive.pc.in
    "${PROJECT_BINARY_DIR}/package/${pc_name}.pc" @ONLY)
  install(FILES "${PROJECT_BINARY_DIR}/package/${pc_name}.pc" DESTINATION ${pc_dir})
endforeach()
install(FILES "${PROJECT_BINARY_DIR}/package/devrt.pc" DESTINATION ${pc_dir})
# `pkg-config --static devrt` still says -ldevrt, which the linker takes as libdevrt.so
# where both are installed; devrt-static.pc names the archive by its path.
configure_file(toolchain/package/devrt-static.pc.in "${PROJECT_BINARY_DIR}/package/devrt-static.pc"
  @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/package/devrt-static.pc" DESTINATION ${pc_dir})
# devrt.pc names the bitcode of the last build installed into a prefix; this one names this
# LLVM's, and stays when a build for another LLVM is installed beside it.
configure_file(toolchain/package/devrt-llvm.pc.in
  "${PROJECT_BINARY_DIR}/package/devrt-llvm${DEVRT_LLVM_VERSION}.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/package/devrt-llvm${DEVRT_LLVM_VERSION}.pc"
        DESTINATION ${pc_dir})

# cpack: a .tar.gz and a Debian package of the same files.
set(CPACK_GENERATOR TGZ DEB)
set(CPACK_PACKAGE_NAME devrt)
set(CPACK_PACKAGE_VENDOR devrt)
set(CPACK_PACKAGE_CONTACT "devrt developers <devrt@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
set(CPACK_PACKAGE_FILE_NAME "devrt-${PROJECT_VERSION}-${CMAKE_SYSTEM_PROCESSOR}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The tools and libdevrt need the C library and libelf/libffi; the GPU runtimes (HSA, CUDA)
# are opened when a device is, so they are suggestions, and LLVM is needed only to build
# kernels with the installed rules.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "clang-${DEVRT_LLVM_VERSION}, lld-${DEVRT_LLVM_VERSION}, llvm-${DEVRT_LLVM_VERSION}, pkg-config")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libhsa-runtime64-1, libamd-comgr2")
include(CPack)
