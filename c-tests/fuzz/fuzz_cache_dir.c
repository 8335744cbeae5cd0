/* A private directory of pipeline-cache paths: a regular file, a symlink,
 * a directory, a FIFO, a missing parent, a name that is not UTF-8. Devices
 * are opened with these paths; afterwards the symlink must still be a
 * symlink, the directory a directory, the FIFO a FIFO, and no temporary
 * files may be left behind. Nothing outside this directory is ever used. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

static const char *KNOWN[] = {"cache.bin", "target", "link", "dir", "fifo", "missing", "\xff", NULL};

static void path_of(const Fuzz *f, const char *name, char *out, size_t n) {
    snprintf(out, n, "%s/%s", f->tmpdir, name);
}

int fz_make_cache_dir(Fuzz *f) {
    const char *base = getenv("TMPDIR");
    snprintf(f->tmpdir, sizeof f->tmpdir, "%s/wgc_fuzz_XXXXXX", base && base[0] ? base : "/tmp");
    if (!mkdtemp(f->tmpdir)) {
        perror("wgc_fuzz: mkdtemp");
        return 0;
    }
    char p[512], q[512];
    path_of(f, "target", p, sizeof p);
    FILE *t = fopen(p, "wb");
    if (t) {
        fputs("not a pipeline cache", t);
        fclose(t);
    }
    path_of(f, "link", q, sizeof q);
    if (symlink(p, q) != 0) perror("wgc_fuzz: symlink");
    path_of(f, "dir", p, sizeof p);
    if (mkdir(p, 0700) != 0) perror("wgc_fuzz: mkdir");
    path_of(f, "fifo", p, sizeof p);
    if (mkfifo(p, 0600) != 0) perror("wgc_fuzz: mkfifo");
    return 1;
}

/* A path for WgcDeviceOptions.pipeline_cache_path, inside the directory. */
const char *fz_cache_path(Fuzz *f, char *buf, size_t n) {
    static const char *NAMES[] = {"cache.bin", "link", "dir", "dir/", "fifo", "missing/cache.bin", "\xff", ""};
    uint32_t k = fz_below(f, 9);
    if (k == 4 && !fz_enabled(f, "cache_path_fifo")) k = 0;
    if (k == 8) { /* a name longer than any file system allows */
        int len = snprintf(buf, n, "%s/", f->tmpdir);
        for (; len < 700 && (size_t)len + 1 < n; len++) buf[len] = 'n';
        buf[len] = 0;
        return buf;
    }
    if (NAMES[k][0] == 0) return "";
    path_of(f, NAMES[k], buf, n);
    return buf;
}

static int kind_is(const char *path, mode_t kind) {
    struct stat st;
    return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

void fz_check_cache_dir(Fuzz *f) {
    char p[512];
    path_of(f, "link", p, sizeof p);
    if (!kind_is(p, S_IFLNK)) fz_finding(f, "the pipeline cache path %s was a symlink and is not any more", p);
    path_of(f, "dir", p, sizeof p);
    if (!kind_is(p, S_IFDIR)) fz_finding(f, "the pipeline cache path %s was a directory and is not any more", p);
    path_of(f, "fifo", p, sizeof p);
    if (!kind_is(p, S_IFIFO)) fz_finding(f, "the pipeline cache path %s was a FIFO and is not any more", p);
    DIR *d = opendir(f->tmpdir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int known = e->d_name[0] == '.';
        for (int i = 0; KNOWN[i] && !known; i++) known = strcmp(e->d_name, KNOWN[i]) == 0;
        if (!known) fz_finding(f, "saving the pipeline cache left %s/%s behind", f->tmpdir, e->d_name);
    }
    closedir(d);
}

static void remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char child[1024];
            snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            remove_tree(child);
        }
        if (d) closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

void fz_remove_cache_dir(Fuzz *f) {
    if (f->tmpdir[0]) remove_tree(f->tmpdir);
}
