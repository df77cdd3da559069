/* The per-line data of agents_internal.h, parsed once. */
#include <pthread.h>

#include "agents/agents_internal.h"

static json_t *lines[4];
static pthread_once_t parsed = PTHREAD_ONCE_INIT;

static json_t *parse(const char *text, size_t len)
{
    json_error_t jerr;
    /* The data is compiled in and checked by the unit tests: a parse
     * failure is a build that must not ship, not an input error. */
    return json_loadb(text, len, 0, &jerr);
}

static void parse_all(void)
{
    lines[0] = parse(ag_data_containerd_1_6, ag_data_containerd_1_6_len);
    lines[1] = parse(ag_data_containerd_1_7, ag_data_containerd_1_7_len);
    lines[2] = parse(ag_data_containerd_2_0, ag_data_containerd_2_0_len);
    lines[3] = parse(ag_data_containerd_2_1, ag_data_containerd_2_1_len);
}

const json_t *ag_line_data(cd_family family)
{
    pthread_once(&parsed, parse_all);
    switch (family) {
    case CD_V1_6:
        return lines[0];
    case CD_V1_7:
        return lines[1];
    case CD_V2_0:
        return lines[2];
    case CD_V2_1:
        return lines[3];
    }
    return NULL;
}

const char *ag_cri_plugin_id(cd_family family)
{
    return cd_is_v1(family) ? "io.containerd.grpc.v1.cri" : "io.containerd.cri.v1.runtime";
}
