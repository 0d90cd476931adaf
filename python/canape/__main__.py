"""`python -m canape run scene.(scn|py) [-n STEPS]`: load and step a scene headless, printing
the time per step. `python -m canape view scene.(scn|py)`: show it in the browser viewer."""

import argparse
import sys
import time


def _load(canape, scene, threads):
    """The scene loaded, its warnings and errors printed; None (error printed) if it cannot be."""
    try:
        sim = canape.load(scene, threads=threads)
    except (ValueError, OSError) as e:
        sys.stderr.write("error: %s\n" % e)
        return None
    for sev, text in sim.diagnostics():
        if sev in ("error", "warning"):
            sys.stderr.write("%s\n" % text)
    return sim


def main(argv=None):
    import canape

    p = argparse.ArgumentParser(prog="python -m canape")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a scene headless")
    r.add_argument("scene")
    r.add_argument("-n", "--steps", type=int, default=100)
    r.add_argument("--threads", type=int, default=0)
    v = sub.add_parser("view", help="show a scene in the browser viewer (Ctrl-C to stop)")
    v.add_argument("scene")
    v.add_argument("--port", type=int, default=0)
    v.add_argument("--host", default="127.0.0.1")
    v.add_argument("--no-open", action="store_true", help="do not open a browser")
    v.add_argument("--play", action="store_true", help="start playing (default: paused, as runSofa)")
    args = p.parse_args(argv)
    sim = _load(canape, args.scene, getattr(args, "threads", 0))
    if sim is None:
        return 1
    if args.cmd == "view":
        try:
            canape.view(sim, port=args.port, host=args.host, open_browser=not args.no_open, paused=not args.play)
        except RuntimeError as e:
            sys.stderr.write("error: %s\n" % e)
            return 2
        return 0
    if args.cmd == "run":
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
