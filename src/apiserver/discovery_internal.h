/* API discovery: which groups, versions and resources the server has.
 *
 * kubectl asks /api and /apis for the aggregated form (two requests) and
 * falls back to the legacy documents (/api/v1, /apis/GROUP/VERSION, one per
 * group version) when the answer is plain JSON; both are built from the
 * resource table. */
#ifndef GPUOP_APISERVER_DISCOVERY_INTERNAL_H
#define GPUOP_APISERVER_DISCOVERY_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#define AS_AGGREGATED_DISCOVERY_TYPE                                                               \
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

/* The APIGroupDiscoveryList of the core group (core) or the named groups. */
json_t *as_discovery_aggregated(bool core);
/* Legacy: APIVersions for /api, APIGroupList for /apis. */
json_t *as_discovery_api_versions(const char *server_address);
json_t *as_discovery_group_list(void);
/* Legacy APIResourceList of one group version, or NULL when unknown. */
json_t *as_discovery_resource_list(const char *group, const char *version);

#endif
