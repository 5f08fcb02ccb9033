/*
 * bench_preflight_workload.h — the benchmark workload shared by
 * bench_preflight (HTTPS, side by side with the ceiling) and
 * bench_preflight_admit (in-process, for callgrind): a typical gang GPU pod
 * (8 GPUs, 4 NICs, NCCL env + mounts to inherit), 3 checks selected,
 * inheritance on, connector token on, gang coordination on.
 * Header-only: each benchmark is one translation unit.
 */
#ifndef BENCH_PREFLIGHT_WORKLOAD_H
#define BENCH_PREFLIGHT_WORKLOAD_H

#include <stdlib.h>
#include <string.h>

#include "gr_preflight.h"

static const char k_cfg[] =
    "networkResourceNames: [nvidia.com/mlnxnics]\n"
    "connectorTokenAudience: platform-connector.nvsentinel.nvidia.com\n"
    "connectorTokenMountPath: /var/run/secrets/nvsentinel/platform-connector\n"
    "connectorTokenExpirationSeconds: 3600\n"
    "gangCoordination: {enabled: true}\n"
    "initContainers:\n"
    "  - name: preflight-dcgm-diag\n"
    "    image: ghcr.io/nvidia/nvsentinel/preflight-dcgm-diag:v1.26.0\n"
    "    env: [{name: DCGM_HOSTENGINE_ADDR, value: 'nvidia-dcgm.gpu-operator.svc:5555'},\n"
    "          {name: DCGM_DIAG_LEVEL, value: '2'}]\n"
    "    volumeMounts: [{name: nvsentinel-socket, mountPath: /var/run}]\n"
    "  - name: preflight-nccl-loopback\n"
    "    image: ghcr.io/nvidia/nvsentinel/preflight-nccl-loopback:v1.26.0\n"
    "    env: [{name: BW_THRESHOLD_GBPS, value: '150'}]\n"
    "    volumeMounts: [{name: nvsentinel-socket, mountPath: /var/run}]\n"
    "  - name: preflight-nccl-allreduce\n"
    "    image: ghcr.io/nvidia/nvsentinel/preflight-nccl-allreduce:v1.26.0\n"
    "    securityContext: {capabilities: {add: [IPC_LOCK]}}\n"
    "    env: [{name: BW_THRESHOLD_GBPS, value: '100'}, {name: MESSAGE_SIZES, value: 4G}]\n"
    "    volumeMounts: [{name: nvsentinel-socket, mountPath: /var/run}]\n";

static const char k_review[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
    "\"uid\":\"0b6b3ac4-5a53-4c3e-9d3c-8a6f5b1e2d7c\",\"kind\":{\"group\":\"\",\"version\":\"v1\","
    "\"kind\":\"Pod\"},\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
    "\"namespace\":\"team-a\",\"operation\":\"CREATE\",\"userInfo\":{\"username\":"
    "\"system:serviceaccount:kube-system:job-controller\"},\"object\":{\"apiVersion\":\"v1\","
    "\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"train-worker-\",\"namespace\":\"team-a\","
    "\"labels\":{\"app\":\"train\",\"job-name\":\"train\"},\"annotations\":{"
    "\"scheduling.k8s.io/group-name\":\"train-pg\"}},\"spec\":{\"schedulingGroup\":{"
    "\"podGroupName\":\"train-pg\"},\"restartPolicy\":\"Never\",\"containers\":[{\"name\":"
    "\"trainer\",\"image\":\"nvcr.io/nvidia/pytorch:26.04-py3\",\"command\":[\"torchrun\","
    "\"train.py\"],\"env\":[{\"name\":\"NCCL_DEBUG\",\"value\":\"WARN\"},{\"name\":"
    "\"NCCL_IB_HCA\",\"value\":\"mlx5_0,mlx5_1,mlx5_2,mlx5_3\"},{\"name\":\"NCCL_SOCKET_IFNAME\","
    "\"value\":\"eth0\"},{\"name\":\"LD_LIBRARY_PATH\",\"value\":\"/usr/local/nvidia/lib64\"},"
    "{\"name\":\"UCX_TLS\",\"value\":\"rc,sm\"},{\"name\":\"WANDB_PROJECT\",\"value\":\"x\"},"
    "{\"name\":\"MASTER_ADDR\",\"value\":\"train-0\"}],\"volumeMounts\":[{\"name\":\"dev-shm\","
    "\"mountPath\":\"/dev/shm\"},{\"name\":\"nccl-topo\",\"mountPath\":\"/opt/topo\"},{\"name\":"
    "\"data\",\"mountPath\":\"/data\"},{\"name\":\"kube-api-access-abcde\",\"mountPath\":"
    "\"/var/run/secrets/kubernetes.io/serviceaccount\",\"readOnly\":true}],\"resources\":{"
    "\"limits\":{\"nvidia.com/gpu\":\"8\",\"nvidia.com/mlnxnics\":\"4\",\"cpu\":\"96\","
    "\"memory\":\"1600Gi\"},\"requests\":{\"nvidia.com/gpu\":\"8\",\"nvidia.com/mlnxnics\":\"4\","
    "\"cpu\":\"96\",\"memory\":\"1600Gi\"}}}],\"volumes\":[{\"name\":\"dev-shm\",\"emptyDir\":{"
    "\"medium\":\"Memory\"}},{\"name\":\"nccl-topo\",\"configMap\":{\"name\":\"topo\"}},"
    "{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"data\"}},{\"name\":"
    "\"kube-api-access-abcde\",\"projected\":{\"sources\":[{\"serviceAccountToken\":{"
    "\"path\":\"token\",\"expirationSeconds\":3607}}]}}]}}}}";

static int gang_resolve(void *ud, const json_t *pod, const char *ns, gr_preflight_gang_ctx *ctx,
                        gr_err *err)
{
    (void)ud;
    (void)pod;
    (void)ns;
    (void)err;
    ctx->gang_id = strdup("volcano-team-a-train-pg");
    ctx->configmap_name = strdup("preflight-volcano-team-a-train-pg");
    ctx->expected_count = 4;
    return GR_OK;
}

#endif
