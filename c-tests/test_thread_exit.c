/* Calls made from a thread-exit (pthread key) destructor, after the thread's
 * own storage has been torn down, return their statuses and messages like
 * any other call instead of aborting the process. */
#include <pthread.h>

#include "test_util.h"

static WgcDevice *g_device;
static pthread_key_t g_key;

typedef struct {
    WgcStatus bad_size, good_create, bad_wgsl, read;
    char message[256];
} Results;
static Results g_results;

static void at_thread_exit(void *arg) {
    (void)arg;
    WgcBuffer *b = NULL;
    g_results.bad_size = wgc_buffer_create(g_device, 0, WGC_BUFFER_USAGE_STORAGE, &b);
    snprintf(g_results.message, sizeof g_results.message, "%s", wgc_last_error_message());
    g_results.good_create = wgc_buffer_create(g_device, 64, WGC_BUFFER_USAGE_STORAGE, &b);
    uint32_t v = 1;
    g_results.read = g_results.good_create == WGC_OK ? wgc_buffer_read(b, 0, &v, 4) : WGC_ERROR_INTERNAL;
    wgc_buffer_release(b);
    WgcKernelDesc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.source = "fn broken( {";
    d.entry_point = "main";
    WgcKernel *k = NULL;
    g_results.bad_wgsl = wgc_kernel_create(g_device, &d, &k);
}

static void *thread_main(void *arg) {
    (void)arg;
    /* Use the library (and fail once) before exiting, so that its per-thread
     * storage exists and is torn down before the key destructor runs. */
    WgcBuffer *b = NULL;
    if (wgc_buffer_create(g_device, 0, 0, &b) != WGC_ERROR_INVALID_ARGUMENT) g_failures++;
    pthread_setspecific(g_key, (void *)1);
    return NULL;
}

int main(void) {
    TestEnv env = test_env();
    g_device = env.device;
    memset(&g_results, 0xff, sizeof g_results);
    if (pthread_key_create(&g_key, at_thread_exit) != 0) return 1;
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0) return 1;
    pthread_join(t, NULL);
    EXPECT(g_results.bad_size == WGC_ERROR_INVALID_ARGUMENT);
    EXPECT(strstr(g_results.message, "size") != NULL);
    EXPECT(g_results.good_create == WGC_OK);
    EXPECT(g_results.read == WGC_OK);
    EXPECT(g_results.bad_wgsl == WGC_ERROR_SHADER_COMPILATION);
    pthread_key_delete(g_key);
    test_env_release(&env);
    return test_finish("test_thread_exit");
}
