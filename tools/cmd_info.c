/* `wgml info`: what device wgml runs on and what it enabled there. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static int list_adapters(void)
{
    wgml_adapter_desc a[32];
    size_t n = 0;
    wgml_status st = wgml_adapters_list(a, 32, &n);
    if (st != WGML_OK)
        return cli_error("listing adapters", st);
    for (size_t i = 0; i < n && i < 32; i++)
        printf("[%zu] %s (%s, %s)\n", i, a[i].name, a[i].backend, a[i].device_type);
    if (n == 0)
        printf("no adapters\n");
    return 0;
}

int cmd_info(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--adapters"))
        return list_adapters();
    if (argc > 1) {
        fprintf(stderr, "wgml info: unknown option '%s'\n", argv[1]);
        return 2;
    }
    wgml_ctx *ctx = cli_open();
    if (!ctx)
        return 1;
    wgml_device_info in;
    wgml_status st = wgml_device_info_get(ctx, &in);
    if (st != WGML_OK) {
        wgml_ctx_destroy(ctx);
        return cli_error("reading device info", st);
    }
    char feat[256], avail[256];
    uint32_t v = in.implementation_version;
    printf("wgml %s on wgpu-native %u.%u.%u.%u\n", WGML_VERSION_STRING, v >> 24, (v >> 16) & 0xff,
           (v >> 8) & 0xff, v & 0xff);
    printf("adapter        %s\n", in.adapter);
    printf("vendor         %s (0x%04x), device 0x%04x\n", in.vendor[0] ? in.vendor : "-", in.vendor_id,
           in.device_id);
    printf("architecture   %s\n", in.architecture[0] ? in.architecture : "-");
    printf("driver         %s\n", in.driver[0] ? in.driver : "-");
    printf("backend        %s\n", in.backend);
    printf("device type    %s\n", in.device_type);
    printf("features       %s\n", wgml_feature_names(in.features, feat, sizeof feat));
    printf("available      %s\n", wgml_feature_names(in.available, avail, sizeof avail));
    if (in.subgroup_size)
        printf("subgroup size  %u (measured)\n", in.subgroup_size);
    else
        printf("subgroup size  - (no subgroups)\n");
    printf("limits         maxBufferSize %llu, maxStorageBufferBindingSize %llu\n",
           (unsigned long long)in.max_buffer_size, (unsigned long long)in.max_storage_binding);
    printf("               workgroup storage %u B, invocations/workgroup %u, workgroups/dim %u\n",
           in.max_workgroup_storage, in.max_invocations_per_workgroup, in.max_workgroups_per_dim);
    printf("               storage offset align %u, uniform offset align %u\n", in.min_storage_offset_align,
           in.min_uniform_offset_align);
    wgml_ctx_destroy(ctx);
    return 0;
}
