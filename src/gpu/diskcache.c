/*
 * On-disk pipeline cache.
 *
 * wgpu-native 29.0.1.1 advertises the PipelineCache feature, but its C API
 * exports no call to create or serialise a pipeline-cache object, so wgml
 * cannot hand compiled pipelines to it.  What it can do is point the Vulkan
 * drivers' own disk caches (Mesa's shader cache, NVIDIA's GL/Vulkan cache),
 * which key on the SPIR-V that naga emits, at wgml's cache folder:
 *
 *   $WGML_CACHE_DIR, else $XDG_CACHE_HOME/wgml, else $HOME/.cache/wgml
 *
 * WGML_NO_DISK_CACHE=1 turns both off.  Variables the user already set are
 * left alone.  This must run before the first WebGPU instance exists,
 * because drivers read them when they load.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int mkdirs(const char *path)
{
    char tmp[1024];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp)
        return -1;
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(tmp, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

const char *wg_disk_cache_dir(char *buf, size_t n)
{
    const char *v = getenv("WGML_NO_DISK_CACHE");
    if (v && *v && strcmp(v, "0") != 0)
        return NULL;
    const char *dir = getenv("WGML_CACHE_DIR");
    if (dir && *dir) {
        snprintf(buf, n, "%s", dir);
        return buf;
    }
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(buf, n, "%s/wgml", xdg);
    else if (home && *home)
        snprintf(buf, n, "%s/.cache/wgml", home);
    else
        return NULL;
    return buf;
}

void wg_disk_cache_setup(void)
{
    char dir[900], sub[1024];
    if (!wg_disk_cache_dir(dir, sizeof dir)) {
        setenv("MESA_SHADER_CACHE_DISABLE", "true", 0);
        setenv("__GL_SHADER_DISK_CACHE", "0", 0);
        return;
    }
    snprintf(sub, sizeof sub, "%s/mesa", dir);
    if (mkdirs(sub) == 0)
        setenv("MESA_SHADER_CACHE_DIR", sub, 0);
    snprintf(sub, sizeof sub, "%s/nvidia", dir);
    if (mkdirs(sub) == 0) {
        setenv("__GL_SHADER_DISK_CACHE", "1", 0);
        setenv("__GL_SHADER_DISK_CACHE_PATH", sub, 0);
        setenv("__GL_SHADER_DISK_CACHE_SKIP_CLEANUP", "1", 0);
    }
}
