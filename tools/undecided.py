"""How many first-use checks end undecided on the fuzz sets (issue 22, section 4): each check
the first-use policy runs (rulebridge/checking/firstuse.py) is counted by its outcome, and the
undecided ones by their reason and key.

    python -m tools.undecided                         # the default fuzz sizes
    python -m tools.undecided --programs 2000 --forward 600 --sequences 150   # the slow sets
"""

from __future__ import annotations

import argparse
import collections
import warnings

from rulebridge.checking import firstuse

COUNTS: collections.Counter = collections.Counter()
UNDECIDED: collections.Counter = collections.Counter()


def _counting(check_call):
    def counted(rule, args, kwargs, **options):
        result = check_call(rule, args, kwargs, **options)
        COUNTS[result.status] += 1
        if result.status == "inconclusive":
            key = f"{result.function}{result.signature}"
            UNDECIDED[(result.reason.split(":")[0][:90], key)] += 1
        return result

    return counted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=40)
    parser.add_argument("--forward", type=int, default=30)
    parser.add_argument("--sequences", type=int, default=3)
    options = parser.parse_args()
    firstuse.check_call = _counting(firstuse.check_call)
    from tests.fuzz.forward import fuzz_forward
    from tests.fuzz.runner import fuzz
    from tests.fuzz.sequences import run

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, go in (("programs", lambda: fuzz(options.programs)),
                          ("forward", lambda: fuzz_forward(options.forward)),
                          ("sequences", lambda: run(options.sequences))):
            before = COUNTS.copy()
            try:
                go()
            except Exception as exc:  # a fuzz set's own failure: report it, count the rest
                print(f"{label}: stopped by {type(exc).__name__}: {str(exc).splitlines()[0]}")
            got = COUNTS - before
            print(f"{label}: {sum(got.values())} first-use checks, {dict(sorted(got.items()))}")
    print(f"undecided: {COUNTS['inconclusive']} of {sum(COUNTS.values())}")
    for (reason, key), n in UNDECIDED.most_common():
        print(f"  {n:4}  {key}: {reason}")


if __name__ == "__main__":
    main()
