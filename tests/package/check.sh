#!/usr/bin/env bash
# What a user of the installed package does, as tests (label package):
#
#   check.sh install       BUILD WORK   cmake --install BUILD into WORK/prefix
#   check.sh cmake         WORK EXAMPLE PREFIX [-DVAR=VALUE...]   build examples/EXAMPLE with
#                                       find_package(devrt) against PREFIX (Unix Makefiles),
#                                       run its tests
#   check.sh pkgconfig     WORK PREFIX  build examples/hello with its Makefile and
#                                       pkg-config against PREFIX, run it
#   check.sh cpack         BUILD WORK   make the .tar.gz and the .deb in WORK/packages
#   check.sh deb-contents  WORK         the .deb holds what the package promises
#   check.sh deb-unpack    WORK         unpack the .deb into WORK/debroot
#   check.sh headers       WORK PREFIX  each installed header alone compiles as C17 and as
#                                       C++17 (g++ -Wall -Wextra -pedantic -Werror), and
#                                       host.h's argument macros work in both
#   check.sh consumer      WORK PREFIX [-DVAR=VALUE...]   copy PREFIX to a path with a
#                                       space (a moved prefix), build a user's own project
#                                       there with the three kernel rules, in Release, Debug
#                                       and without the dependencies' .pc files, and run its
#                                       emulation kernel with the shared and static runtime,
#                                       by the path given and by the one the build defines;
#                                       find_package with a component must fail naming it
#   check.sh consumer-project DIR       write that project's sources into DIR (for
#                                       tests/build)
#
# Exit status: 0 as expected, 1 not, 2 usage.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
examples=$src/examples
step=${1:-}
fail() { echo "check.sh $step: $*" >&2; exit 1; }

# A user's own project (consumer-project DIR): an application linked with devrt's shared
# and static runtime, and one kernel built by each of the three kernel rules.
write_consumer_project() {
    mkdir -p "$1"
    # A user's kernel with what compilers warn about and users leave in (an unused variable
    # and parameter): each rule builds it as its compiler takes it by default.
    cat >"$1/kernel.c" <<'EOF'
#include <devrt/devrt.h>

#include "factor.h"

DEVRT_KERNEL2(scaled, uint32_t *, out, uint32_t, unused_factor)
{
    int unused;
    uint32_t id = (uint32_t)devrt_global_id(DEVRT_X);
    out[id] = FACTOR * id;
}
EOF
    # The same kernel in C++ (C++17 by its extension; C17 would refuse the file).
    cp "$1/kernel.c" "$1/kernel.cpp"
    # A header of the project's own, which only the compiler's dependency files name.
    printf '#define FACTOR 3\n' >"$1/factor.h"
    cat >"$1/main.c" <<'EOF'
#include <devrt/host.h>

#include "factor.h"

int main(int argc, char **argv)
{
    devrt_device *device;
    devrt_module *module;
    /* No argument: the image the build named (integration.md, "From CMake"). */
    const char *image = argc == 2 ? argv[1] : APP_KERNELS;
    if (argc > 2 || devrt_device_open(DEVRT_BACKEND_EMU, 0, NULL, &device) != DEVRT_SUCCESS)
        return 2;
    if (devrt_module_load(device, image, &module) != DEVRT_SUCCESS)
        return fprintf(stderr, "%s\n", devrt_last_error()), 2;
    uint32_t *out = devrt_mem_alloc(device, 64 * sizeof *out);
    struct devrt_launch_config config = {.grid = {2, 1, 1}, .block = {32, 1, 1}};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(out), DEVRT_ARG_U32(1)};
    int wrong = devrt_launch(module, "scaled", &config, args, 2, NULL) != DEVRT_SUCCESS;
    for (uint32_t i = 0; i < 64 && !wrong; ++i)
        wrong = out[i] != FACTOR * i;
    devrt_mem_free(device, out);
    devrt_module_unload(module);
    devrt_device_close(device);
    return wrong;
}
EOF
    cat >"$1/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(devrt 1.0 REQUIRED)
add_executable(app main.c)
target_link_libraries(app PRIVATE devrt::runtime)
add_executable(app_static main.c)
target_link_libraries(app_static PRIVATE devrt::runtime_static)
devrt_add_emu_kernel(app_kernels SOURCES kernel.c)
devrt_add_amdgcn_kernel(app_kernels SOURCE kernel.c TARGET gfx90a)
devrt_add_amdgcn_kernel(app_kernels SOURCE kernel.cpp TARGET gfx1100)
if(NOT app_kernels_gfx90a_HSACO MATCHES "/app_kernels.gfx90a.hsaco$" OR
   NOT app_kernels_gfx1100_HSACO MATCHES "/app_kernels.gfx1100.hsaco$")
  message(FATAL_ERROR "no code object path per target: ${app_kernels_gfx90a_HSACO}, ${app_kernels_gfx1100_HSACO}")
endif()
devrt_add_nvptx_kernel(app_kernels_nvptx SOURCES kernel.c ARCH sm_90)
target_compile_definitions(app PRIVATE APP_KERNELS="$<TARGET_FILE:app_kernels>")
target_compile_definitions(app_static PRIVATE APP_KERNELS="$<TARGET_FILE:app_kernels>")
enable_testing()
add_test(NAME emu COMMAND app $<TARGET_FILE:app_kernels>)
add_test(NAME emu_static COMMAND app_static $<TARGET_FILE:app_kernels>)
add_test(NAME emu_named_by_build COMMAND app)
EOF
}

case $step in
install)
    [[ $# -eq 3 ]] || exit 2
    rm -rf "$3/prefix"
    cmake --install "$2" --prefix "$3/prefix" >/dev/null
    ;;
cmake)
    [[ $# -ge 4 ]] || exit 2
    work=$2/$3-cmake-$(basename "$(dirname "$4")")-$(basename "$4")
    rm -rf "$work"
    cmake -S "$examples/$3" -B "$work" -G "Unix Makefiles" -DCMAKE_PREFIX_PATH="$4" \
        -DCMAKE_BUILD_TYPE=Release "${@:5}"
    cmake --build "$work" -j2
    ctest --test-dir "$work" --output-on-failure --no-tests=error
    ;;
pkgconfig)
    [[ $# -eq 3 ]] || exit 2
    work=$2/hello-pkgconfig-$(basename "$(dirname "$3")")-$(basename "$3")
    rm -rf "$work"
    cp -r "$examples/hello" "$work"
    pcdir=$(dirname "$(find "$3" -name devrt.pc -path '*pkgconfig*' | head -1)")
    [[ -f $pcdir/devrt.pc ]] || fail "no devrt.pc under $3"
    PKG_CONFIG_PATH=$pcdir make -C "$work" all hello_static hello_kernels.gfx90a.hsaco
    "$work/hello" "$work/hello_kernels.so"
    # devrt-static.pc links the runtime in; `--static devrt` (the control) does not.
    needs() { readelf -d "$1" | grep -q 'NEEDED.*libdevrt\.so'; }
    ! needs "$work/hello_static" || fail "hello_static (devrt-static.pc) needs libdevrt.so"
    "$work/hello_static" "$work/hello_kernels.so"
    # shellcheck disable=SC2046
    cc -o "$work/hello_control" "$work/main.c" $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags \
        --static --libs devrt) -Wl,-rpath,"$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir devrt)"
    needs "$work/hello_control" || fail "control: pkg-config --static devrt linked libdevrt.a"
    ;;
cpack)
    [[ $# -eq 3 ]] || exit 2
    rm -rf "$3/packages"
    (cd "$2" && cpack -B "$3/packages" >/dev/null)
    ls "$3"/packages/*.deb "$3"/packages/*.tar.gz
    ;;
deb-contents)
    [[ $# -eq 2 ]] || exit 2
    deb=$(ls "$2"/packages/*.deb)
    listing=$(dpkg-deb -c "$deb" | awk '{ print ($(NF - 1) == "->") ? $(NF - 2) : $NF }')
    info=$(dpkg-deb -I "$deb")
    for path in ./usr/bin/devrt-run ./usr/bin/devrt-leaks \
        ./usr/include/devrt/devrt.h ./usr/include/devrt/host.h ./usr/include/devrt/symbols.def \
        ./usr/lib/libdevrt.so.1 ./usr/lib/libdevrt.so ./usr/lib/libdevrt.a \
        ./usr/lib/libdevrt_host.a ./usr/lib/libdevrt_shield.a ./usr/lib/libdevrt_emu.a \
        ./usr/lib/devrt/llvm-19/devrt-amdgcn.bc ./usr/lib/devrt/llvm-19/devrt-nvptx.bc \
        ./usr/lib/cmake/devrt/devrtConfig.cmake ./usr/lib/cmake/devrt/devrtConfigVersion.cmake \
        ./usr/lib/cmake/devrt/devrtTargets.cmake ./usr/lib/cmake/devrt/devrtKernels.cmake \
        ./usr/lib/pkgconfig/devrt.pc ./usr/lib/pkgconfig/devrt-static.pc \
        ./usr/lib/pkgconfig/devrt-host-stubs.pc ./usr/share/doc/devrt/docs/api.md \
        ./usr/lib/pkgconfig/devrt-shield.pc ./usr/lib/pkgconfig/devrt-emu.pc \
        ./usr/share/doc/devrt/copyright ./usr/share/doc/devrt/CHANGES.md \
        ./usr/share/doc/devrt/examples/hello/main.c ./usr/share/doc/devrt/examples/hello/Makefile; do
        grep -qxF "$path" <<<"$listing" || fail "$deb lacks $path"
    done
    grep -q "Apache License" <(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/devrt/copyright) ||
        fail "the package's copyright file does not state the licence"
    grep -q "^ Depends:.*libffi8" <<<"$info" || fail "the package does not depend on libffi8"
    if grep -q "libhsa-runtime64\|libcuda" <<<"$(grep '^ Depends:' <<<"$info")"; then
        fail "the package depends on a GPU runtime, which devrt opens at run time"
    fi
    echo "$deb: $(wc -l <<<"$listing") entries, all expected ones present"
    ;;
deb-unpack)
    [[ $# -eq 2 ]] || exit 2
    rm -rf "$2/debroot"
    dpkg-deb -x "$(ls "$2"/packages/*.deb)" "$2/debroot"
    ;;
headers)
    [[ $# -eq 3 ]] || exit 2
    work=$2/headers-$(basename "$(dirname "$3")")-$(basename "$3")
    rm -rf "$work"
    mkdir -p "$work"
    flags=(-Wall -Wextra -pedantic -Werror -I"$3/include" -c -o "$work/t.o")
    status=0
    for header in "$3"/include/devrt/*.h; do
        name=devrt/$(basename "$header")
        printf '#include <%s>\ntypedef int not_empty; /* C refuses an empty file */\n' "$name" >"$work/t.c"
        cc -std=c17 "${flags[@]}" "$work/t.c" || { echo "$name: not C17"; status=1; }
        # heap.h's slab ends in a flexible array member, which C++ lacks; only the device
        # library and the runtime read it.
        [[ $name == devrt/heap.h ]] && continue
        cp "$work/t.c" "$work/t.cpp"
        c++ -std=c++17 "${flags[@]}" "$work/t.cpp" || { echo "$name: not C++17"; status=1; }
    done
    # host.h's argument macros, in a program of each language, give the values they name:
    # DEVRT_ARG_<TYPE> for each of devrt-run's type names, and the first names kept as aliases.
    cat >"$work/args.c" <<'EOF'
#include <devrt/host.h>
int main(void)
{
    int x = 0;
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&x), DEVRT_ARG_I32(-1), DEVRT_ARG_U32(2u),
                               DEVRT_ARG_U64(1ull << 40), DEVRT_ARG_F64(0.5),
                               DEVRT_ARG_I64(-(1ll << 40)), DEVRT_ARG_F32(0.25f),
                               DEVRT_ARG_I8(-3), DEVRT_ARG_U8(200), DEVRT_ARG_I16(-300),
                               DEVRT_ARG_U16(60000), DEVRT_ARG_BYTES(&x, sizeof x),
                               DEVRT_ARG_INT(-5), DEVRT_ARG_UINT(6u), DEVRT_ARG_FLOAT(0.75f),
                               DEVRT_ARG_DOUBLE(1.5)};
    return !(args[0].type == DEVRT_ARG_POINTER && args[0].value.pointer == (void *)&x &&
             args[1].type == DEVRT_ARG_I32 && args[1].value.i32 == -1 &&
             args[2].type == DEVRT_ARG_U32 && args[2].value.u32 == 2u &&
             args[3].type == DEVRT_ARG_U64 && args[3].value.u64 == 1ull << 40 &&
             args[4].type == DEVRT_ARG_F64 && args[4].value.f64 == 0.5 &&
             args[5].type == DEVRT_ARG_I64 && args[5].value.i64 == -(1ll << 40) &&
             args[6].type == DEVRT_ARG_F32 && args[6].value.f32 == 0.25f &&
             args[7].type == DEVRT_ARG_I8 && args[7].value.i8 == -3 &&
             args[8].type == DEVRT_ARG_U8 && args[8].value.u8 == 200 &&
             args[9].type == DEVRT_ARG_I16 && args[9].value.i16 == -300 &&
             args[10].type == DEVRT_ARG_U16 && args[10].value.u16 == 60000 &&
             args[11].type == DEVRT_ARG_BYTES && args[11].size == sizeof x &&
             args[11].value.pointer == (void *)&x &&
             args[12].type == DEVRT_ARG_I32 && args[12].value.i32 == -5 &&
             args[13].type == DEVRT_ARG_U32 && args[13].value.u32 == 6u &&
             args[14].type == DEVRT_ARG_F32 && args[14].value.f32 == 0.75f &&
             args[15].type == DEVRT_ARG_F64 && args[15].value.f64 == 1.5);
}
EOF
    cp "$work/args.c" "$work/args.cpp"
    flags=(-Wall -Wextra -pedantic -Werror -I"$3/include")
    { cc -std=c17 "${flags[@]}" "$work/args.c" -o "$work/args-c" && "$work/args-c"; } ||
        { echo "host.h's argument macros: wrong in C17"; status=1; }
    { c++ -std=c++17 "${flags[@]}" "$work/args.cpp" -o "$work/args-cpp" && "$work/args-cpp"; } ||
        { echo "host.h's argument macros: wrong in C++17"; status=1; }
    [[ $status -eq 0 ]] || fail "headers under $3/include do not compile alone"
    ;;
consumer)
    [[ $# -ge 3 ]] || exit 2
    work=$2/consumer
    rm -rf "$work"
    moved="$work/moved prefix/devrt"
    mkdir -p "$work/project" "$work/component" "$(dirname "$moved")"
    cp -a "$3" "$moved"
    write_consumer_project "$work/project"
    # "bare": no .pc file of devrt's dependencies (libffi, libelf, msgpack-c) in sight, as
    # on a machine with the .deb and its dependencies but not their -dev packages.
    mkdir -p "$work/no-pc"
    env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR="$moved/lib/pkgconfig" \
        pkg-config --cflags --libs devrt >/dev/null ||
        fail "pkg-config devrt needs the .pc files of devrt's dependencies"
    for type in Release Debug bare; do
        build="$work/build $type"
        env=()
        [[ $type == bare ]] && env=(env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR="$work/no-pc")
        "${env[@]}" cmake -S "$work/project" -B "$build" -G "Unix Makefiles" \
            -DCMAKE_PREFIX_PATH="$moved" -DCMAKE_BUILD_TYPE=${type/bare/Release} "${@:4}" ||
            fail "find_package(devrt) failed ($type)"
        cmake --build "$build" -j2 || fail "the $type build against \"$moved\" failed"
        ctest --test-dir "$build" --output-on-failure --no-tests=error || fail "$type: the program failed"
    done
    printf '%s\n' 'cmake_minimum_required(VERSION 3.25)' 'project(component C)' \
        'find_package(devrt 1.0 REQUIRED COMPONENTS nonesuch)' >"$work/component/CMakeLists.txt"
    if out=$(cmake -S "$work/component" -B "$work/component/build" \
        -DCMAKE_PREFIX_PATH="$moved" 2>&1); then
        fail "find_package(devrt COMPONENTS nonesuch) found devrt"
    fi
    # CMake wraps the message's lines.
    grep -q "devrt has no components (asked for nonesuch)" <<<"$(tr -s ' \n' ' ' <<<"$out")" ||
        fail "find_package(devrt COMPONENTS nonesuch) failed without naming it: $out"
    ;;
consumer-project)
    [[ $# -eq 2 ]] || exit 2
    write_consumer_project "$2"
    ;;
*)
    echo "usage: check.sh install|cmake|pkgconfig|cpack|deb-contents|deb-unpack|headers|consumer|consumer-project ..." >&2
    exit 2
    ;;
esac
