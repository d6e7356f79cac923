/**
 * Who this process is, in terms another run can check before it calls a lease
 * holder dead (README.md says the rule): the pid namespace, the boot,
 * and the pid's start time, all read from /proc. I/O lives here; lease.ts
 * decides.
 *
 * Every reading is best effort: where /proc is absent (not Linux) or is not
 * this process's own (a /proc mounted from another pid namespace, where
 * /proc/self is someone else or nobody), the fields are left out, and other
 * runs then wait for the lease to expire instead of judging by pid.
 */
import fs from "node:fs";

export interface PidSpace {
  /** `pid:[4026531836]`: the link target of /proc/self/ns/pid. */
  readonly pidNamespace: string;
  /** /proc/sys/kernel/random/boot_id: a namespace inode is unique only within one boot. */
  readonly bootId: string;
  /** This process's start time in clock ticks after boot. */
  readonly processStart: string;
}

/** This process's pid space, or undefined when /proc cannot tell it for certain. */
export function currentPidSpace(procRoot = "/proc"): PidSpace | undefined {
  try {
    const stat = fs.readFileSync(`${procRoot}/self/stat`, "utf8");
    // A /proc of another pid namespace shows another pid (or none) for self: its pids are not ours.
    if (Number(stat.slice(0, stat.indexOf(" "))) !== process.pid) return undefined;
    const processStart = startTimeField(stat);
    const pidNamespace = fs.readlinkSync(`${procRoot}/self/ns/pid`);
    const bootId = fs.readFileSync(`${procRoot}/sys/kernel/random/boot_id`, "utf8").trim();
    if (processStart === undefined || !/^pid:\[\d+\]$/.test(pidNamespace) || bootId === "") return undefined;
    return { pidNamespace, bootId, processStart };
  } catch {
    return undefined;
  }
}

/** When process `pid` started (clock ticks after boot); undefined when it does not exist or /proc cannot say. */
export function processStartTime(pid: number, procRoot = "/proc"): string | undefined {
  try {
    return startTimeField(fs.readFileSync(`${procRoot}/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/<pid>/stat. The command (field 2) is in parentheses and may hold spaces and ')'. */
export function startTimeField(stat: string): string | undefined {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 3.. follow the command, so field 22 is the 20th of them.
  const start = fields[19];
  return start !== undefined && /^\d+$/.test(start) ? start : undefined;
}

/**
 * Whether process `pid` still runs here, and, when its start time was recorded, is still the same
 * process (a pid reused by another process means the holder is gone). Signal 0 checks existence;
 * EPERM means it exists but is not ours. A start time /proc cannot give counts as the same process.
 */
export function pidAlive(pid: number, processStart?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (processStart === undefined) return true;
  const now = processStartTime(pid);
  return now === undefined || now === processStart;
}
