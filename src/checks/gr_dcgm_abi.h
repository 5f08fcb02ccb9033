/*
 * gr_dcgm_abi.h — our own declarations of the parts of the DCGM C API
 * (dcgm_structs.h / dcgm_agent.h, DCGM 3.3+ / 4.x, libdcgm.so.4) that the
 * real DCGM backend uses. Internal to src/checks (gr_gpu_real.c and the pure
 * response normalizer in gr_checks_dcgm.c, which the unit tests feed).
 *
 * Layouts follow the documented structs: dcgmConnectV2Params_v2,
 * dcgmDeviceAttributes_v3 (for the GPU UUID) and dcgmDiagResponse_v10
 * (per-GPU results indexed by test, DCGM >= 3.3.7; DCGM 4 still accepts it).
 * A struct whose size does not match the library's makes DCGM answer
 * DCGM_ST_VER_MISMATCH (the version word encodes the size), never a silent
 * misread.
 */
#ifndef GR_DCGM_ABI_H
#define GR_DCGM_ABI_H

#include <stdint.h>

#define GR_DCGM_MAKE_VERSION(type, ver) \
    ((unsigned int)(sizeof(type) | ((unsigned long)(ver) << 24U)))

typedef uintptr_t gr_dcgmHandle_t;
typedef uintptr_t gr_dcgmGpuGrp_t;

typedef struct {
    unsigned int version;
    unsigned int persistAfterDisconnect;
    unsigned int timeoutMs;
    unsigned int addressIsUnixSocket;
} gr_dcgmConnectV2Params_v2;

typedef struct {
    unsigned int version;
    unsigned int memClock;
    unsigned int smClock;
} gr_dcgmClockSet_v1;

typedef struct {
    unsigned int version;
    unsigned int count;
    gr_dcgmClockSet_v1 clockSet[256];
} gr_dcgmDeviceSupportedClockSets_v1;

typedef struct {
    unsigned int version, slowdownTemp, shutdownTemp;
} gr_dcgmDeviceThermals_v1;

typedef struct {
    unsigned int version, curPowerLimit, defaultPowerLimit, enforcedPowerLimit, minPowerLimit,
        maxPowerLimit;
} gr_dcgmDevicePowerLimits_v1;

typedef struct {
    unsigned int version;
    char brandName[256];
    char deviceName[256];
    char pciBusId[256];
    char serial[256];
    char uuid[256];
    char vbios[256];
    char inforomImageVersion[256];
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char driverVersion[256];
    unsigned int virtualizationMode;
} gr_dcgmDeviceIdentifiers_v1;

typedef struct {
    unsigned int version, bar1Total, fbTotal, fbUsed, fbFree;
} gr_dcgmDeviceMemoryUsage_v1;

typedef struct {
    unsigned int version, persistenceModeEnabled, migModeEnabled, confidentialComputeMode;
} gr_dcgmDeviceSettings_v2;

typedef struct {
    unsigned int version;
    gr_dcgmDeviceSupportedClockSets_v1 clockSets;
    gr_dcgmDeviceThermals_v1 thermalSettings;
    gr_dcgmDevicePowerLimits_v1 powerLimits;
    gr_dcgmDeviceIdentifiers_v1 identifiers;
    gr_dcgmDeviceMemoryUsage_v1 memoryUsage;
    gr_dcgmDeviceSettings_v2 settings;
} gr_dcgmDeviceAttributes_v3;

#define GR_DCGM_ERR_MSG_LENGTH 512
#define GR_DCGM_MAX_ERRORS     5
#define GR_DCGM_PER_GPU_TESTS  13 /* DCGM_PER_GPU_TEST_COUNT_V8 */
#define GR_DCGM_LEVEL_ONE_MAX  16

typedef struct {
    char msg[GR_DCGM_ERR_MSG_LENGTH];
    int gpuId;
    unsigned int code;
    unsigned int category;
    unsigned int severity;
} gr_dcgmDiagErrorDetail_v2;

typedef struct {
    int status; /* dcgmDiagResult_t */
    gr_dcgmDiagErrorDetail_v2 error[GR_DCGM_MAX_ERRORS];
    char info[GR_DCGM_ERR_MSG_LENGTH];
} gr_dcgmDiagTestResult_v3;

typedef struct {
    unsigned int gpuId;
    unsigned int hwDiagnosticReturn;
    gr_dcgmDiagTestResult_v3 results[GR_DCGM_PER_GPU_TESTS];
} gr_dcgmDiagResponsePerGpu_v5;

typedef struct {
    unsigned int version;
    char data[2048];
} gr_dcgmDiagTestAuxData_v1;

typedef struct {
    unsigned int version;
    unsigned int gpuCount;
    unsigned int levelOneTestCount;
    gr_dcgmDiagTestResult_v3 levelOneResults[GR_DCGM_LEVEL_ONE_MAX];
    gr_dcgmDiagResponsePerGpu_v5 perGpuResponses[32];
    gr_dcgmDiagErrorDetail_v2 systemError;
    char devIds[32][5];
    char devSerials[32][256];
    char dcgmVersion[12];
    char driverVersion[256];
    gr_dcgmDiagTestAuxData_v1 auxDataPerTest[GR_DCGM_PER_GPU_TESTS];
} gr_dcgmDiagResponse_v10;

#define GR_DCGM_DIAG_RESPONSE_VERSION10 GR_DCGM_MAKE_VERSION(gr_dcgmDiagResponse_v10, 10)
#define GR_DCGM_CONNECT_V2_VERSION2     GR_DCGM_MAKE_VERSION(gr_dcgmConnectV2Params_v2, 2)
#define GR_DCGM_DEVICE_ATTRIBUTES_V3    GR_DCGM_MAKE_VERSION(gr_dcgmDeviceAttributes_v3, 3)

/* dcgmDiagnosticLevel_t */
enum {
    GR_DCGM_LVL_SHORT = 10,
    GR_DCGM_LVL_MED = 20,
    GR_DCGM_LVL_LONG = 30,
    GR_DCGM_LVL_XLONG = 40
};
/* dcgmGroupType_t */
enum { GR_DCGM_GROUP_EMPTY = 1 };

#endif
