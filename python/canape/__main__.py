"""`python -m canape run scene.(scn|py) [-n STEPS]`: load and step a scene headless, printing
the time per step. (`canape view` is the Rust command's viewer.)"""

import argparse
import sys
import time


def main(argv=None):
    import canape

    p = argparse.ArgumentParser(prog="python -m canape")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a scene headless")
    r.add_argument("scene")
    r.add_argument("-n", "--steps", type=int, default=100)
    r.add_argument("--threads", type=int, default=0)
    args = p.parse_args(argv)
    if args.cmd == "run":
        try:
            sim = canape.load(args.scene, threads=args.threads)
        except (ValueError, OSError) as e:
            sys.stderr.write("error: %s\n" % e)
            return 1
        for sev, text in sim.diagnostics():
            if sev in ("error", "warning"):
                sys.stderr.write("%s\n" % text)
        t0 = time.perf_counter()
        try:
            sim.step(args.steps)
        except canape.SimulationError as e:
            sys.stderr.write("%s\n" % e)
            return 3
        ms = (time.perf_counter() - t0) * 1000.0 / max(args.steps, 1)
        print("%s: %d steps, t = %g s, %.3f ms/step" % (args.scene, args.steps, sim.time, ms))
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
