/* gr_test_scale.h — how long integration tests wait, scaled to the machine.
 *
 * Integration tests poll the real control plane for something to happen
 * (a copy restored, garbage collection, a ConfigMap filled). Their deadlines
 * only bound a hang; they are never timing assertions. On a loaded machine
 * (2 cores shared by several builds and tests) the same work takes several
 * times longer, so every such deadline is multiplied by
 *
 *     scale = GR_TEST_TIMEOUT_SCALE × load
 *
 *   GR_TEST_TIMEOUT_SCALE  a number >= 1 (default 1; at most 100), set by the
 *                          caller or by CTest (cmake -DGR_TEST_TIMEOUT_SCALE=N,
 *                          which multiplies the CTest TIMEOUT of integration
 *                          tests too);
 *   load                   the 1-minute load average per CPU when the wait
 *                          starts, clamped to [1, 4] (a machine twice
 *                          over-subscribed waits twice as long).
 *
 * test/harness/gr_harness.sh applies the same rule to shell tests
 * (gr_scale SECONDS). Header-only: the kube client's own integration tests
 * use it without linking the harness.
 */
#ifndef GR_TEST_SCALE_H
#define GR_TEST_SCALE_H

#include <stdlib.h>
#include <unistd.h>

/* The multiplier described above (>= 1). */
static inline double gr_test_timeout_scale(void)
{
    double user = 1.0;
    const char *s = getenv("GR_TEST_TIMEOUT_SCALE");
    if (s && *s) {
        char *end = NULL;
        double v = strtod(s, &end);
        if (end && *end == '\0' && v >= 1.0 && v <= 100.0)
            user = v;
    }
    double load = 1.0, avg[1];
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (getloadavg(avg, 1) == 1 && ncpu > 0)
        load = avg[0] / (double)ncpu;
    if (load < 1.0)
        load = 1.0;
    if (load > 4.0)
        load = 4.0;
    return user * load;
}

/* seconds × scale, rounded up; at least `seconds`. */
static inline int gr_test_scaled_s(int seconds)
{
    double v = (double)seconds * gr_test_timeout_scale();
    int r = (int)v;
    if ((double)r < v)
        r++;
    return r < seconds ? seconds : r;
}

/* Iterations for a poll loop that sleeps `step_ms` per try and should last
 * `seconds` unscaled: the scaled deadline divided by the step. */
static inline int gr_test_scaled_tries(int seconds, long step_ms)
{
    long n = (long)gr_test_scaled_s(seconds) * 1000L / (step_ms > 0 ? step_ms : 1);
    return n < 1 ? 1 : (int)n;
}

#endif
