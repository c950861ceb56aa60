/* One reading of the machine's counters, in one call: everyo.machine_state's hot path.
 *
 * A measurement reads the machine before and after it (TARGETS.md allows that 1 % of a 1-ms
 * window). Most of a reading is the kernel regenerating /proc/stat; this does the rest (the
 * clock, getrusage, parsing the total line) without the interpreter's overhead. It runs no
 * thread: a thread that copied the counters in the background was tried and cost more (about
 * 200 wake-ups a second, each one inside the timed calls it was meant to keep clear).
 *
 * machine_state.py keeps the same reading in pure Python where this is not built, and for a
 * process limited to some CPUs (then it sums the per-CPU lines).
 *
 * read() -> (monotonic s, busy ticks of every CPU or None, own CPU ticks, involuntary context
 *            switches)
 * Ticks are the kernel's USER_HZ (sysconf(_SC_CLK_TCK)), as /proc/stat counts them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double hz = 100.0;
static int stat_fd = -1; /* used with the GIL held */
static int stat_missing = 0; /* /proc/stat could not be opened: not tried again */

/* Busy ticks from the total line ("cpu  user nice system idle iowait irq softirq steal ..."):
 * all but idle and iowait. -1 when the line is not there. */
static long long
busy_ticks(void)
{
    char buf[256];
    if (stat_fd < 0) {
        if (stat_missing)
            return -1;
        stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
        if (stat_fd < 0) {
            stat_missing = 1;
            return -1;
        }
    }
    ssize_t n = pread(stat_fd, buf, sizeof(buf) - 1, 0);
    if (n <= 4)
        return -1;
    buf[n] = '\0';
    if (buf[0] != 'c' || buf[1] != 'p' || buf[2] != 'u' || buf[3] != ' ')
        return -1;
    char *p = buf + 3;
    long long busy = 0;
    for (int field = 1; field <= 8; field++) {
        char *end;
        errno = 0;
        long long value = strtoll(p, &end, 10);
        if (end == p || errno != 0)
            return -1;
        if (field != 4 && field != 5)
            busy += value;
        p = end;
    }
    return busy;
}

static PyObject *
machine_read(PyObject *self, PyObject *unused)
{
    struct timespec now;
    struct rusage usage;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (getrusage(RUSAGE_SELF, &usage) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    long long busy = busy_ticks();
    double own = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec
                  + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6) * hz;
    double t = now.tv_sec + now.tv_nsec * 1e-9;
    if (busy < 0)
        return Py_BuildValue("(dOdl)", t, Py_None, own, usage.ru_nivcsw);
    return Py_BuildValue("(dddl)", t, (double)busy, own, usage.ru_nivcsw);
}

static PyMethodDef methods[] = {
    {"read", machine_read, METH_NOARGS,
     "read() -> (monotonic s, busy ticks of every CPU or None, own CPU ticks, involuntary "
     "context switches)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cmachine",
    "One reading of the machine's counters (see everyo.machine_state).", -1, methods,
};

PyMODINIT_FUNC
PyInit__cmachine(void)
{
    long ticks = sysconf(_SC_CLK_TCK);
    if (ticks > 0)
        hz = (double)ticks;
    return PyModule_Create(&module);
}
