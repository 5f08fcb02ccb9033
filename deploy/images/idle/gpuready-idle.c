/*
 * gpuready-idle — the idle entrypoint of every gpuready image.
 *
 * The preflight image-cache DaemonSet runs each check image with this
 * command so the kubelet sees the image in use and never garbage-collects
 * it. It does nothing until SIGTERM, SIGINT or SIGHUP and then exits 0, so
 * pod deletion is immediate and clean. It works as PID 1 (a handler is
 * installed, so the kernel delivers the signals to init), uses no CPU while
 * waiting and needs no shell, libraries or writable filesystem (built
 * static by scripts/build-images).
 *
 *   gpuready-idle            wait for a termination signal, exit 0
 *   gpuready-idle --version  print the version, exit 0
 *
 * Any other argument: usage on stderr, exit 2.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#ifndef GR_VERSION
#define GR_VERSION "dev"
#endif

static volatile sig_atomic_t gr_idle_stop;

static void gr_idle_on_signal(int sig)
{
    (void)sig;
    gr_idle_stop = 1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("gpuready-idle %s\n", GR_VERSION);
        return 0;
    }
    if (argc > 1) {
        fputs("usage: gpuready-idle [--version]\n"
              "Waits for SIGTERM, SIGINT or SIGHUP, then exits 0.\n",
              stderr);
        return 2;
    }
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    sigset_t block, wait_mask;
    sigemptyset(&block);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = gr_idle_on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        sigaddset(&block, sigs[i]);
        if (sigaction(sigs[i], &sa, NULL) != 0) {
            perror("gpuready-idle: sigaction");
            return 1;
        }
    }
    /* Block the signals so none is lost between the check and the wait;
     * sigsuspend atomically unblocks them while sleeping. */
    if (sigprocmask(SIG_BLOCK, &block, &wait_mask) != 0) {
        perror("gpuready-idle: sigprocmask");
        return 1;
    }
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigdelset(&wait_mask, sigs[i]);
    while (!gr_idle_stop)
        sigsuspend(&wait_mask);
    return 0;
}
