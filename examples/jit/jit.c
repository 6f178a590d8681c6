/*
 * jit: what a JIT does with devrt, in memory, through the LLVM-C API of the LLVM that wrote
 * devrt's bitcode (16, 19 or 22: JIT_LLVM_MAJOR, from CMakeLists.txt).
 *
 *   jit --bitcode devrt-amdgcn.bc --target gfx90a -o kernel.hsaco
 *   jit --bitcode devrt-nvptx.bc  --target sm_90  -o kernel.ptx
 *
 * 1. builds a kernel module with the IR builder: a kernel that allocates, prints and frees
 *    with devrt, and raises an exception when the heap is exhausted;
 * 2. links devrt's bitcode into it, keeping only what the kernel needs;
 * 3. optimizes it for the target (default<O2>);
 * 4. generates code: a code object (.hsaco) for amdgcn, PTX text for nvptx;
 * 5. checks that __devrt_state, through which the host runtime finds the kernel state, is
 *    still exported.
 *
 * Exit codes: 0 done; 1 LLVM failed (verification, link, optimization, code generation);
 * 2 bad usage or unknown target; 3 the bitcode cannot be read or is not devrt's for the
 * target; 4 the output cannot be written or ld.lld failed; 5 __devrt_state is not exported.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

/* LLVM 16 has the 32-bit forms only: its strings and arrays here are short. */
#if JIT_LLVM_MAJOR < 19
#define LLVMConstStringInContext2(ctx, text, length, dont_null_terminate)                          \
    LLVMConstStringInContext((ctx), (text), (unsigned)(length), (dont_null_terminate))
#endif
#if JIT_LLVM_MAJOR < 17
#define LLVMArrayType2(type, count) LLVMArrayType((type), (unsigned)(count))
#endif

#ifndef JIT_LD_LLD
#define JIT_LD_LLD "ld.lld"
#endif

extern char **environ;

enum {
    EXIT_LLVM = 1,
    EXIT_USAGE = 2,
    EXIT_INPUT = 3,
    EXIT_OUTPUT = 4,
    EXIT_NOT_EXPORTED = 5,
};

#define KERNEL_NAME "devrt_jit_kernel"
#define STATE_NAME "__devrt_state"
/* enum devrt_exception_code in <devrt/abi.h> */
#define DEVRT_EXCEPTION_OUT_OF_MEMORY 9
/* struct devrt_printf_state in <devrt/devrt.h>: the caller provides it, zeroed. */
#define PRINTF_STATE_SIZE 48
#define PRINTF_STATE_ALIGN 8

#define AMDGCN "amdgcn-amd-amdhsa"
#define NVPTX "nvptx64-nvidia-cuda"

struct target {
    const char *name; /* --target, and the CPU LLVM generates code for */
    const char *triple;
    /*
     * The PTX ISA version: at least 7.0, which devrt-nvptx.bc is built for, and at least
     * what the GPU needs.
     */
    const char *features;
};

/* The targets devrt supports (docs/design.md): twelve gfx targets, NVIDIA GPUs from sm_70. */
static const struct target targets[] = {
    {"gfx900", AMDGCN, ""},     {"gfx906", AMDGCN, ""},     {"gfx908", AMDGCN, ""},
    {"gfx90a", AMDGCN, ""},     {"gfx942", AMDGCN, ""},     {"gfx1030", AMDGCN, ""},
    {"gfx1036", AMDGCN, ""},    {"gfx1100", AMDGCN, ""},    {"gfx1101", AMDGCN, ""},
    {"gfx1151", AMDGCN, ""},    {"gfx1200", AMDGCN, ""},    {"gfx1201", AMDGCN, ""},
    {"sm_70", NVPTX, "+ptx70"}, {"sm_75", NVPTX, "+ptx70"}, {"sm_80", NVPTX, "+ptx70"},
    {"sm_86", NVPTX, "+ptx71"}, {"sm_89", NVPTX, "+ptx78"}, {"sm_90", NVPTX, "+ptx78"},
};

struct options {
    const char *bitcode;
    const struct target *target;
    const char *output;
    const char *lld;
    const char *save_kernel; /* the kernel module before linking, for the command-line tools */
    bool time;
};

static bool is_amdgcn(const struct target *t)
{
    return strcmp(t->triple, AMDGCN) == 0;
}

static void report(const char *format, va_list args)
{
    fputs("jit: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
}

/* Errors end the program; the operating system takes back what LLVM allocated. */
static _Noreturn void fail(int code, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    report(format, args);
    va_end(args);
    exit(code);
}

static void print_usage(FILE *stream)
{
    fputs("usage: jit --bitcode DEVRT.bc --target TARGET -o OUTPUT [--lld PATH]\n"
          "           [--save-kernel KERNEL.bc] [--time]\n"
          "  TARGET: ",
          stream);
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        fprintf(stream, "%s%s", i ? " " : "", targets[i].name);
    fputs("\n  a gfx target gives a code object (linked by ld.lld, or --lld PATH), an sm one PTX"
          "\n  --save-kernel writes the kernel module as built, before devrt is linked in"
          "\n  --time prints the seconds each step took\n",
          stream);
}

static _Noreturn void usage_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    report(format, args);
    va_end(args);
    print_usage(stderr);
    exit(EXIT_USAGE);
}

static struct options parse_options(int argc, char **argv)
{
    struct options o = {.lld = JIT_LD_LLD};
    const char *target = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0) {
            print_usage(stdout);
            exit(0);
        }
        if (strcmp(arg, "--time") == 0) {
            o.time = true;
            continue;
        }
        const char **value = strcmp(arg, "--bitcode") == 0       ? &o.bitcode
                             : strcmp(arg, "--target") == 0      ? &target
                             : strcmp(arg, "-o") == 0            ? &o.output
                             : strcmp(arg, "--lld") == 0         ? &o.lld
                             : strcmp(arg, "--save-kernel") == 0 ? &o.save_kernel
                                                                 : NULL;
        if (!value)
            usage_error("unknown option '%s'", arg);
        if (++i == argc)
            usage_error("%s needs a value", arg);
        *value = argv[i];
    }
    if (!o.bitcode || !target || !o.output)
        usage_error("--bitcode, --target and -o are required");
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        if (strcmp(target, targets[i].name) == 0)
            o.target = &targets[i];
    if (!o.target)
        usage_error("unknown target '%s'", target);
    return o;
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/*
 * Without a handler, LLVM prints an error and exits on its own; with one, every error gets
 * our prefix and our exit code, decided by the step that saw it fail.
 */
static void diagnose(LLVMDiagnosticInfoRef info, void *context)
{
    int *errors = context;
    LLVMDiagnosticSeverity severity = LLVMGetDiagInfoSeverity(info);
    if (severity != LLVMDSError && severity != LLVMDSWarning)
        return;
    char *text = LLVMGetDiagInfoDescription(info);
    fprintf(stderr, "jit: LLVM %s: %s\n", severity == LLVMDSError ? "error" : "warning", text);
    LLVMDisposeMessage(text);
    if (severity == LLVMDSError)
        ++*errors;
}

static LLVMModuleRef load_library(LLVMContextRef ctx, const char *path, const struct target *t)
{
    LLVMMemoryBufferRef buffer;
    char *message;
    if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buffer, &message))
        fail(EXIT_INPUT, "cannot read the devrt bitcode %s: %s", path, message);
    LLVMModuleRef library;
    bool bad = LLVMParseBitcodeInContext2(ctx, buffer, &library);
    LLVMDisposeMemoryBuffer(buffer);
    if (bad)
        fail(EXIT_INPUT, "%s is not bitcode that LLVM %d reads", path, JIT_LLVM_MAJOR);
    /* Linking amdgcn code into an nvptx kernel would only fail later, and obscurely. */
    if (strcmp(LLVMGetTarget(library), t->triple) != 0)
        fail(EXIT_INPUT, "%s is for %s, but %s needs devrt's bitcode for %s", path,
             LLVMGetTarget(library), t->name, t->triple);
    return library;
}

static LLVMTargetMachineRef target_machine(const struct target *t)
{
    LLVMTargetRef target;
    char *message;
    if (LLVMGetTargetFromTriple(t->triple, &target, &message))
        fail(EXIT_LLVM, "this LLVM cannot generate code for %s: %s", t->triple, message);
    return LLVMCreateTargetMachine(target, t->triple, t->name, t->features, LLVMCodeGenLevelDefault,
                                   LLVMRelocDefault, LLVMCodeModelDefault);
}

/* A declaration of a devrt function, as <devrt/devrt.h> declares it. */
static LLVMValueRef declare(LLVMModuleRef m, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                            unsigned count)
{
    LLVMValueRef f = LLVMAddFunction(m, name, LLVMFunctionType(ret, params, count, false));
    /* A devrt call may talk between lanes: it must not move into or out of divergent code. */
    unsigned convergent = LLVMGetEnumAttributeKindForName("convergent", strlen("convergent"));
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(LLVMGetModuleContext(m), convergent, 0));
    return f;
}

static LLVMValueRef call(LLVMBuilderRef b, LLVMValueRef f, LLVMValueRef *args, unsigned count)
{
    return LLVMBuildCall2(b, LLVMGlobalGetValueType(f), f, args, count, "");
}

/* devrt's functions take generic (flat) pointers, whatever address space the data is in. */
static LLVMValueRef generic(LLVMBuilderRef b, LLVMValueRef pointer)
{
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(pointer)) == 0)
        return pointer;
    LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(pointer));
    return LLVMBuildAddrSpaceCast(b, pointer, LLVMPointerTypeInContext(ctx, 0), "");
}

/*
 * A C string constant where clang puts them: amdgcn's constant address space; on nvptx the
 * generic one, which the back end moves to global memory.
 */
static LLVMValueRef string(LLVMModuleRef m, LLVMBuilderRef b, const struct target *t,
                           const char *text)
{
    LLVMValueRef init =
        LLVMConstStringInContext2(LLVMGetModuleContext(m), text, strlen(text), false);
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(m, LLVMTypeOf(init), ".str", is_amdgcn(t) ? 4 : 0);
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, true);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    return generic(b, g);
}

/*
 * The kernel, as it would be written in C against <devrt/devrt.h>:
 *
 *   DEVRT_KERNEL void devrt_jit_kernel(uint64_t *out, uint64_t n)
 *   {
 *       uint64_t id = devrt_global_id(DEVRT_X);
 *       uint64_t *block = devrt_malloc(n * sizeof *block);
 *       if (!block)
 *           devrt_signal_exception_code(DEVRT_EXCEPTION_OUT_OF_MEMORY, "...");
 *       block[0] = id;
 *       devrt_printf("lane %lu: %lu bytes at %p\n", id, n * sizeof *block, block);
 *       out[id] = block[0];
 *       devrt_free(block);
 *   }
 *
 * devrt_printf is a macro on GPUs; a JIT makes the calls it expands to: begin, one typed
 * append per argument, end.
 */
static LLVMModuleRef build_kernel(LLVMContextRef ctx, LLVMTargetMachineRef tm,
                                  const struct target *t)
{
    LLVMModuleRef m = LLVMModuleCreateWithNameInContext("jit", ctx);
    LLVMSetTarget(m, t->triple);
    LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(m, layout); /* also where allocas live: amdgcn's private memory */
    LLVMDisposeTargetData(layout);
    if (is_amdgcn(t)) { /* what the host runtime loads: code object version 5, as clang says */
        LLVMAddModuleFlag(
            m, LLVMModuleFlagBehaviorError, "amdhsa_code_object_version",
            strlen("amdhsa_code_object_version"),
            LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(ctx), 500, false)));
        /*
         * The same version where devrt's grid functions read it (they read code object 5's
         * block counts, and divide on 4). clang defines this in every amdgcn module it
         * compiles; a front end without clang defines it itself, as for ROCm's libraries.
         */
        LLVMValueRef abi =
            LLVMAddGlobalInAddressSpace(m, LLVMInt32TypeInContext(ctx), "__oclc_ABI_version", 4);
        LLVMSetInitializer(abi, LLVMConstInt(LLVMInt32TypeInContext(ctx), 500, false));
        LLVMSetGlobalConstant(abi, 1);
        LLVMSetLinkage(abi, LLVMWeakODRLinkage);
        LLVMSetVisibility(abi, LLVMHiddenVisibility);
    }

    LLVMTypeRef void_ = LLVMVoidTypeInContext(ctx), i8 = LLVMInt8TypeInContext(ctx);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx), i64 = LLVMInt64TypeInContext(ctx);
    LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);

    LLVMValueRef global_id = declare(m, "devrt_global_id", i64, (LLVMTypeRef[]){i32}, 1);
    LLVMValueRef malloc_ = declare(m, "devrt_malloc", ptr, (LLVMTypeRef[]){i64}, 1);
    LLVMValueRef free_ = declare(m, "devrt_free", void_, (LLVMTypeRef[]){ptr}, 1);
    LLVMValueRef raise =
        declare(m, "devrt_signal_exception_code", void_, (LLVMTypeRef[]){i32, ptr}, 2);
    LLVMValueRef printf_context = declare(m, "devrt_printf_output_context", i32, NULL, 0);
    LLVMValueRef begin = declare(m, "devrt_printf_begin", ptr, (LLVMTypeRef[]){ptr, i32, ptr}, 3);
    LLVMValueRef append_u64 =
        declare(m, "devrt_printf_append_u64", ptr, (LLVMTypeRef[]){ptr, i64}, 2);
    LLVMValueRef append_ptr =
        declare(m, "devrt_printf_append_ptr", ptr, (LLVMTypeRef[]){ptr, ptr}, 2);
    LLVMValueRef end = declare(m, "devrt_printf_end", i32, (LLVMTypeRef[]){ptr}, 1);

    LLVMValueRef kernel = LLVMAddFunction(
        m, KERNEL_NAME, LLVMFunctionType(void_, (LLVMTypeRef[]){ptr, i64}, 2, false));
    if (is_amdgcn(t)) {
        LLVMSetFunctionCallConv(kernel, LLVMAMDGPUKERNELCallConv);
        LLVMSetVisibility(kernel, LLVMProtectedVisibility); /* as DEVRT_KERNEL makes it */
    } else {
        LLVMSetFunctionCallConv(kernel, LLVMPTXKernelCallConv);
    }
    /*
     * devrt is built freestanding, so its functions carry "no-builtins", and LLVM inlines
     * such a function only into a caller that has it too (clang's -ffreestanding kernels
     * do). Without it, devrt_global_id and its kind stay calls.
     */
    LLVMAddAttributeAtIndex(
        kernel, LLVMAttributeFunctionIndex,
        LLVMCreateStringAttribute(ctx, "no-builtins", strlen("no-builtins"), "", 0));
    LLVMValueRef out = LLVMGetParam(kernel, 0), n = LLVMGetParam(kernel, 1);

    LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(ctx, kernel, "entry");
    LLVMBasicBlockRef no_memory = LLVMAppendBasicBlockInContext(ctx, kernel, "no_memory");
    LLVMBasicBlockRef allocated = LLVMAppendBasicBlockInContext(ctx, kernel, "allocated");

    LLVMPositionBuilderAtEnd(b, entry);
    /* In the entry block, so that once printf's calls are inlined it lives in registers. */
    LLVMValueRef state = LLVMBuildAlloca(b, LLVMArrayType2(i8, PRINTF_STATE_SIZE), "state");
    LLVMSetAlignment(state, PRINTF_STATE_ALIGN);
    LLVMValueRef id = call(b, global_id, (LLVMValueRef[]){LLVMConstInt(i32, 0, false)}, 1);
    LLVMValueRef bytes = LLVMBuildMul(b, n, LLVMConstInt(i64, 8, false), "bytes");
    LLVMValueRef block = call(b, malloc_, &bytes, 1);
    LLVMBuildCondBr(b, LLVMBuildIsNull(b, block, ""), no_memory, allocated);

    LLVMPositionBuilderAtEnd(b, no_memory);
    call(b, raise,
         (LLVMValueRef[]){LLVMConstInt(i32, DEVRT_EXCEPTION_OUT_OF_MEMORY, false),
                          string(m, b, t, "devrt_jit_kernel: devrt_malloc returned NULL")},
         2);
    LLVMBuildUnreachable(b);

    LLVMPositionBuilderAtEnd(b, allocated);
    LLVMBuildStore(b, id, block);
    LLVMValueRef s = generic(b, state);
    LLVMBuildMemSet(b, s, LLVMConstInt(i8, 0, false), LLVMConstInt(i64, PRINTF_STATE_SIZE, false),
                    PRINTF_STATE_ALIGN);
    LLVMValueRef format = string(m, b, t, "lane %lu: %lu bytes at %p\n");
    s = call(b, begin, (LLVMValueRef[]){s, call(b, printf_context, NULL, 0), format}, 3);
    s = call(b, append_u64, (LLVMValueRef[]){s, id}, 2);
    s = call(b, append_u64, (LLVMValueRef[]){s, bytes}, 2);
    s = call(b, append_ptr, (LLVMValueRef[]){s, block}, 2);
    call(b, end, &s, 1);
    LLVMValueRef slot = LLVMBuildGEP2(b, i64, out, &id, 1, "slot");
    LLVMBuildStore(b, LLVMBuildLoad2(b, i64, block, ""), slot);
    call(b, free_, &block, 1);
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);

    char *message;
    if (LLVMVerifyModule(m, LLVMReturnStatusAction, &message))
        fail(EXIT_LLVM, "the kernel module is not valid IR: %s", message);
    return m;
}

/*
 * LLVM-C has no --only-needed: LLVMLinkModules2 links all of the library. So, as JITs do,
 * link it all, make every definition internal except the kernel and the state global the
 * host looks up by name, and let globaldce delete whatever the kernel does not reach. This
 * gives the module that `llvm-link --only-needed` and `opt -passes=internalize` give.
 */
static void link_library(LLVMModuleRef kernel, LLVMModuleRef library, const int *errors)
{
    if (LLVMLinkModules2(kernel, library) || *errors) /* consumes the library */
        fail(EXIT_LLVM, "linking the devrt bitcode into the kernel failed");
    /* A devrt function the bitcode lacks would be an undefined symbol in the code object. */
    for (LLVMValueRef f = LLVMGetFirstFunction(kernel); f; f = LLVMGetNextFunction(f))
        if (LLVMIsDeclaration(f) && strncmp(LLVMGetValueName(f), "devrt_", 6) == 0)
            fail(EXIT_INPUT, "the devrt bitcode does not define %s", LLVMGetValueName(f));
}

static bool kept(LLVMValueRef v)
{
    const char *name = LLVMGetValueName(v);
    return strcmp(name, KERNEL_NAME) == 0 || strcmp(name, STATE_NAME) == 0;
}

static void internalize(LLVMValueRef v)
{
    LLVMLinkage linkage = LLVMGetLinkage(v);
    /* llvm.used and its like are LLVM's own lists, not symbols. */
    if (LLVMIsDeclaration(v) || linkage == LLVMInternalLinkage || linkage == LLVMPrivateLinkage ||
        strncmp(LLVMGetValueName(v), "llvm.", 5) == 0 || kept(v))
        return;
    LLVMSetLinkage(v, LLVMInternalLinkage);
    LLVMSetVisibility(v, LLVMDefaultVisibility); /* a local symbol has no visibility */
}

static void optimize(LLVMModuleRef m, LLVMTargetMachineRef tm)
{
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        internalize(f);
    for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g))
        internalize(g);
    /* globaldce first, so that O2 spends no time on library code the kernel never calls. */
    LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
    LLVMErrorRef error = LLVMRunPasses(m, "globaldce,default<O2>", tm, options);
    LLVMDisposePassBuilderOptions(options);
    if (error) {
        char *message = LLVMGetErrorMessage(error);
        fail(EXIT_LLVM, "optimizing the kernel failed: %s", message);
    }
}

/*
 * The host runtime finds the kernel state through __devrt_state: it must reach code
 * generation defined, external and protected, which the code object or the PTX turns into
 * an exported symbol (a protected dynamic symbol; a .visible .global). The project's
 * codegen checks read the result itself.
 */
static void check_state(LLVMModuleRef m)
{
    LLVMValueRef state = LLVMGetNamedGlobal(m, STATE_NAME);
    if (!state || LLVMIsDeclaration(state))
        fail(EXIT_NOT_EXPORTED, "%s is not defined after linking", STATE_NAME);
    if (LLVMGetLinkage(state) != LLVMExternalLinkage ||
        LLVMGetVisibility(state) != LLVMProtectedVisibility)
        fail(EXIT_NOT_EXPORTED, "%s is no longer external and protected", STATE_NAME);
}

static void write_file(const char *path, const char *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        fail(EXIT_OUTPUT, "cannot write %s: %s", path, strerror(errno));
    bool ok = fwrite(data, 1, size, f) == size;
    ok = fclose(f) == 0 && ok;
    if (!ok)
        fail(EXIT_OUTPUT, "cannot write %s: %s", path, strerror(errno));
}

/*
 * LLVM gives a relocatable object; HSA loads shared objects. LLD is a C++ library with no
 * C API, so this one step runs ld.lld, as clang itself does for amdgcn.
 */
static void link_code_object(const char *lld, LLVMMemoryBufferRef object, const char *output)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[4096];
    if (snprintf(path, sizeof path, "%s/devrt-jit-XXXXXX", dir) >= (int)sizeof path)
        fail(EXIT_OUTPUT, "TMPDIR is too long");
    int fd = mkstemp(path);
    if (fd < 0)
        fail(EXIT_OUTPUT, "cannot create a file in %s: %s", dir, strerror(errno));
    close(fd);
    write_file(path, LLVMGetBufferStart(object), LLVMGetBufferSize(object));

    char *argv[] = {(char *)lld, "-shared", "--no-undefined", path, "-o", (char *)output, NULL};
    pid_t pid;
    int status = 0, error = posix_spawnp(&pid, lld, NULL, NULL, argv, environ);
    if (!error && waitpid(pid, &status, 0) < 0)
        error = errno;
    unlink(path);
    if (error)
        fail(EXIT_OUTPUT, "cannot run %s: %s", lld, strerror(error));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail(EXIT_OUTPUT, "%s could not link the code object %s", lld, output);
}

int main(int argc, char **argv)
{
    struct options o = parse_options(argc, argv);
    const struct target *t = o.target;
    double start = seconds();

    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMContextRef ctx = LLVMContextCreate();
    int errors = 0;
    LLVMContextSetDiagnosticHandler(ctx, diagnose, &errors);

    LLVMModuleRef library = load_library(ctx, o.bitcode, t);
    double loaded = seconds();
    LLVMTargetMachineRef tm = target_machine(t);
    LLVMModuleRef m = build_kernel(ctx, tm, t);
    if (o.save_kernel && LLVMWriteBitcodeToFile(m, o.save_kernel))
        fail(EXIT_OUTPUT, "cannot write %s", o.save_kernel);
    double built = seconds();
    link_library(m, library, &errors);
    double linked = seconds();
    optimize(m, tm);
    check_state(m);
    double optimized = seconds();

    char *message;
    LLVMMemoryBufferRef code;
    LLVMCodeGenFileType kind = is_amdgcn(t) ? LLVMObjectFile : LLVMAssemblyFile;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, m, kind, &message, &code))
        fail(EXIT_LLVM, "generating code for %s failed: %s", t->name, message);
    if (errors)
        fail(EXIT_LLVM, "generating code for %s failed", t->name);
    double generated = seconds();
    if (is_amdgcn(t))
        link_code_object(o.lld, code, o.output);
    else
        write_file(o.output, LLVMGetBufferStart(code), LLVMGetBufferSize(code));
    double done = seconds();

    if (o.time)
        fprintf(stderr,
                "jit: seconds: load %.4f build %.4f link %.4f optimize %.4f codegen %.4f "
                "lld %.4f total %.4f\n",
                loaded - start, built - loaded, linked - built, optimized - linked,
                generated - optimized, is_amdgcn(t) ? done - generated : 0.0, done - start);
    LLVMDisposeMemoryBuffer(code);
    LLVMDisposeModule(m);
    LLVMDisposeTargetMachine(tm);
    LLVMContextDispose(ctx);
    return 0;
}
