/*
 * gr_gang_topo_data.h — the bundled NCCL topology files, compiled into
 * gr_gang from deploy/gang/topology/<shape>.xml by src/gang/CMakeLists.txt
 * (generated gr_gang_topo_data.c). Internal to gr_gang: use
 * gr_gang_topo_builtin() (gr_gang.h). NUL-terminated, static.
 */
#ifndef GR_GANG_TOPO_DATA_H
#define GR_GANG_TOPO_DATA_H

extern const char gr_gang_topo_ndv4_xml[];
extern const char gr_gang_topo_ndv5_xml[];

#endif
