/*
 * orphans: the reaping load of bench/run (thousands of orphans at once).
 *
 * Forks N/B children one after the other; each forks B grandchildren that
 * exit at once, then exits itself without waiting for them, and this process
 * waits for its own child only. So every B grandchildren are orphaned at once,
 * already zombies, and reparent in a burst to the nearest reaper: PID 1 of the
 * PID namespace the benchmark runs in, i.e. the init under test, which gets
 * one merged SIGCHLD for many zombies (a reaper that waits once per signal
 * leaves the rest behind). B = 1 is the plain double fork. Then it polls /proc (mounted for that
 * namespace by `unshare --mount-proc`) until no process is in state Z, or
 * until a deadline, and writes one line to OUT:
 *
 *   <fork loop s> <start to last zombie gone s> <zombies left> <peak zombies>
 *
 * written to OUT.tmp and renamed, so a reader never sees half a line. With
 * --hold it then sleeps for ever (for supervisors that would restart it).
 *
 * usage: orphans N B OUT DEADLINE_S [--hold]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Number of processes in state Z visible in /proc. */
static long zombies(void) {
    DIR *d = opendir("/proc");
    if (!d) return -1;
    long z = 0;
    struct dirent *e;
    char path[300], buf[512];
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0) continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0) continue;
        buf[n] = 0;
        char *p = strrchr(buf, ')'); /* comm may hold spaces and parens */
        if (p && p[1] == ' ' && p[2] == 'Z') z++;
    }
    closedir(d);
    return z;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: orphans N B OUT DEADLINE_S [--hold]\n");
        return 2;
    }
    long n = atol(argv[1]), b = atol(argv[2]);
    const char *out = argv[3];
    double deadline_s = atof(argv[4]);
    int hold = argc > 5 && strcmp(argv[5], "--hold") == 0;
    if (b < 1) b = 1;

    double t0 = now();
    for (long done = 0; done < n; done += b) {
        long k = n - done < b ? n - done : b;
        pid_t pid = fork();
        if (pid < 0) { perror("fork"); return 1; }
        if (pid == 0) {
            for (long j = 0; j < k; j++)
                if (fork() == 0) _exit(0); /* an orphan-to-be */
            _exit(0);
        }
        while (waitpid(pid, NULL, 0) < 0) {}
    }
    double t_fork = now();

    long left, peak = 0;
    double t_done = -1, end = t_fork + deadline_s;
    for (;;) {
        left = zombies();
        if (left > peak) peak = left;
        if (left == 0) { t_done = now(); break; }
        if (now() > end) break;
        usleep(2000);
    }

    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    FILE *f = fopen(tmp, "w");
    if (!f) { perror(tmp); return 1; }
    fprintf(f, "%.6f %.6f %ld %ld\n", t_fork - t0, t_done < 0 ? -1.0 : t_done - t0, left, peak);
    fclose(f);
    rename(tmp, out);
    if (hold) for (;;) pause();
    return 0;
}
