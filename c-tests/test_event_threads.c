/* Events are usable from any thread at once: several threads ask for the GPU
 * time between the same two fresh events at the same moment, many times. */
#include <pthread.h>

#include "test_util.h"

enum { THREADS = 8, ROUNDS = 40 };

static WgcEvent *g_start, *g_end;
static pthread_barrier_t g_go, g_done;
static WgcStatus g_status[THREADS];
static double g_ms[THREADS];
static char g_message[THREADS][200];

static void *worker(void *arg) {
    int id = (int)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_barrier_wait(&g_go); /* main has recorded fresh events */
        WgcStatus s = wgc_event_elapsed_ms(g_start, g_end, &g_ms[id]);
        if (s != WGC_OK && g_status[id] == WGC_OK) {
            g_status[id] = s;
            snprintf(g_message[id], sizeof g_message[id], "%s", wgc_last_error_message());
        }
        pthread_barrier_wait(&g_done);
    }
    return NULL;
}

int main(void) {
    TestEnv env = test_env();
    if (!env.info.has_timestamps) {
        printf("no timestamps on this adapter: nothing to test\n");
        test_env_release(&env);
        return test_finish("test_event_threads");
    }
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(env.device, 4096, WGC_BUFFER_USAGE_STORAGE, &b));
    pthread_barrier_init(&g_go, NULL, THREADS + 1);
    pthread_barrier_init(&g_done, NULL, THREADS + 1);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    int disagree = 0;
    for (int r = 0; r < ROUNDS; r++) {
        CHECK(wgc_stream_record_event(env.stream, &g_start));
        CHECK(wgc_stream_fill_buffer(env.stream, b, 0, 4096, (uint32_t)r));
        CHECK(wgc_stream_record_event(env.stream, &g_end));
        pthread_barrier_wait(&g_go);
        pthread_barrier_wait(&g_done);
        for (int i = 1; i < THREADS; i++) disagree += g_status[i] == WGC_OK && g_ms[i] != g_ms[0];
        wgc_event_release(g_start);
        wgc_event_release(g_end);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        if (g_status[i] != WGC_OK) {
            fprintf(stderr, "thread %d: %s: %s\n", i, wgc_status_string(g_status[i]), g_message[i]);
            g_failures++;
        }
    }
    EXPECT(disagree == 0);
    pthread_barrier_destroy(&g_go);
    pthread_barrier_destroy(&g_done);
    wgc_buffer_release(b);
    test_env_release(&env);
    return test_finish("test_event_threads");
}
