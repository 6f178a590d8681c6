/*
 * Output: the server's handlers for DEVRT_RPC_OUTPUT and DEVRT_RPC_PRINTF, and where a
 * module's output goes. Each lane's message becomes one unit, written whole as soon as its
 * request arrives, so output streams while the kernel runs and never interleaves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/output.h>

#include "format.h"
#include "runtime.h"

_Static_assert(DEVRT_OUTPUT_RAW == DEVRT_OUTPUT_CONTEXT_RAW &&
                   DEVRT_OUTPUT_PRINTF == DEVRT_OUTPUT_CONTEXT_PRINTF,
               "the host's output streams are the device's output contexts");

void devrt_module_set_output_file(devrt_module *module, FILE *file)
{
    pthread_mutex_lock(&module->output_lock);
    module->output_file = file;
    module->output_fn = NULL; /* the latest choice wins */
    module->output_context = NULL;
    pthread_mutex_unlock(&module->output_lock);
}

void devrt_module_set_output_callback(devrt_module *module, devrt_output_fn *fn, void *context)
{
    pthread_mutex_lock(&module->output_lock);
    module->output_fn = fn;
    module->output_context = context;
    pthread_mutex_unlock(&module->output_lock);
}

void devrt_output_flush(devrt_module *module)
{
    pthread_mutex_lock(&module->output_lock);
    if (module->output_file && !module->output_fn)
        fflush(module->output_file);
    pthread_mutex_unlock(&module->output_lock);
}

static int serve(struct devrt_request *request, const char *what)
{
    devrt_module *module = request->module;
    struct devrt_text text = {0};
    int status = 0;
    pthread_mutex_lock(&module->output_lock);
    for (uint32_t lane = 0; lane < DEVRT_RPC_MAX_LANES; ++lane) {
        if (!(request->lane_mask >> lane & 1))
            continue;
        const struct devrt_lane_message *m = &request->lane[lane];
        char why[200];
        text.length = 0;
        int rendered = -1;
        if (!m->open)
            snprintf(why, sizeof why, "not an open-length message");
        else if (m->arg != DEVRT_OUTPUT_CONTEXT_RAW && m->arg != DEVRT_OUTPUT_CONTEXT_PRINTF)
            snprintf(why, sizeof why, "unknown output context %u", m->arg);
        else
            rendered =
                devrt_output_render(request->opcode, m->data, m->length, &text, why, sizeof why);
        if (rendered != 0 && status == 0) {
            snprintf(request->error, sizeof request->error, "%s, lane %u: %s", what, lane, why);
            status = -1;
        }
        if (text.failed) {
            if (status == 0)
                snprintf(request->error, sizeof request->error,
                         "%s, lane %u: no host memory for its output", what, lane);
            status = -1;
            devrt_text_free(&text);
            continue;
        }
        if (text.length == 0)
            continue;
        if (module->output_fn)
            module->output_fn(module->output_context, m->arg, text.data, text.length);
        else if (module->output_file)
            fwrite(text.data, 1, text.length, module->output_file);
    }
    /* Streamed, not held back until the launch ends: a pipe or file sees it now. */
    if (module->output_file && !module->output_fn)
        fflush(module->output_file);
    pthread_mutex_unlock(&module->output_lock);
    devrt_text_free(&text);
    return status;
}

int devrt_serve_output(struct devrt_request *request)
{
    return serve(request, "output");
}

int devrt_serve_printf(struct devrt_request *request)
{
    return serve(request, "printf");
}
