/* The pipeline cache path is read and written only as a regular file:
 * links, directories, devices and FIFOs are refused with a status and left
 * as they are, and saving leaves no temporary files behind. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

static char g_dir[] = "/tmp/wgc_cache_dir_XXXXXX";

static WgcStatus open_device(WgcInstance *inst, const char *path, WgcDevice **dev) {
    WgcDeviceOptions o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.adapter_index = -1;
    o.pipeline_cache_path = path;
    *dev = NULL;
    return wgc_device_create(inst, &o, dev);
}

/* Entries in the test directory other than . and .. */
static int entries(void) {
    DIR *d = opendir(g_dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    if (d) closedir(d);
    return n;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) exit(1);
    fputs(text, f);
    fclose(f);
}

static int file_is(const char *path, const char *text) {
    char buf[64] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n == strlen(text) && memcmp(buf, text, n) == 0;
}

static void compile_something(WgcDevice *dev) {
    WgcKernel *k = compile(dev,
                           "@group(0) @binding(0) var<storage, read_write> x: array<u32>;\n"
                           "@compute @workgroup_size(1) fn main() { x[0] = 1u; }\n",
                           "main");
    wgc_kernel_release(k);
}

int main(void) {
    if (!mkdtemp(g_dir)) return 1;
    char target[256], link[256], sub[256], fifo[256], regular[256];
    snprintf(target, sizeof target, "%s/target", g_dir);
    snprintf(link, sizeof link, "%s/link", g_dir);
    snprintf(sub, sizeof sub, "%s/sub", g_dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", g_dir);
    snprintf(regular, sizeof regular, "%s/cache", g_dir);
    WgcInstance *inst = NULL;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    WgcDevice *dev = NULL;

    /* A symbolic link is refused and neither followed nor replaced. */
    write_file(target, "keep");
    if (symlink(target, link) != 0) return 1;
    EXPECT_STATUS(open_device(inst, link, &dev), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT(dev == NULL);
    struct stat st;
    EXPECT(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    EXPECT(file_is(target, "keep"));

    /* A directory, a FIFO (which must not block) and a device. */
    if (mkdir(sub, 0700) != 0 || mkfifo(fifo, 0600) != 0) return 1;
    EXPECT_STATUS(open_device(inst, sub, &dev), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(open_device(inst, fifo, &dev), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(open_device(inst, "/dev/null", &dev), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT(entries() == 4); /* target, link, sub, fifo: nothing left behind */

    /* A regular file is saved, and saved again, leaving only itself. */
    CHECK(open_device(inst, regular, &dev));
    WgcAdapterInfo a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    CHECK(wgc_device_info(dev, &a));
    compile_something(dev);
    uint32_t saved = 7;
    CHECK(wgc_device_save_pipeline_cache(dev, &saved));
    CHECK(wgc_device_save_pipeline_cache(dev, &saved));
    EXPECT(saved == a.has_pipeline_cache);
    EXPECT(entries() == 4 + (int)a.has_pipeline_cache);

    if (a.has_pipeline_cache) {
        /* The path turned into a link after the device was created: the save
         * is refused, the link stays, and nothing is left behind. */
        remove(regular);
        if (symlink(target, regular) != 0) return 1;
        EXPECT_STATUS(wgc_device_save_pipeline_cache(dev, &saved), WGC_ERROR_INVALID_ARGUMENT);
        EXPECT(lstat(regular, &st) == 0 && S_ISLNK(st.st_mode));
        EXPECT(file_is(target, "keep"));
        EXPECT(entries() == 5);
        /* Released: the save at release is skipped, not an error. */
        wgc_device_release(dev);
        EXPECT(lstat(regular, &st) == 0 && S_ISLNK(st.st_mode));
        EXPECT(entries() == 5);
        remove(regular);

        /* A path in a directory that does not exist: refused when saving. */
        char missing[300];
        snprintf(missing, sizeof missing, "%s/none/cache", g_dir);
        CHECK(open_device(inst, missing, &dev));
        compile_something(dev);
        EXPECT_STATUS(wgc_device_save_pipeline_cache(dev, &saved), WGC_ERROR_INVALID_ARGUMENT);
        EXPECT(entries() == 4);
    }
    wgc_device_release(dev);

    remove(target);
    remove(link);
    remove(fifo);
    rmdir(sub);
    rmdir(g_dir);
    wgc_instance_release(inst);
    return test_finish("test_pipeline_cache_file");
}
