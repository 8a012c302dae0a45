"""Model inputs for the peer runners (ov_run.py, ov_profile.py): NAME=FILE.npy given with --input or
as a bare argument, each loaded with numpy."""
import numpy as np


def take_bare_inputs(parser, args, rest):
    """Moves the NAME=FILE arguments argparse left over in `rest` into args.input; anything else is a
    usage error."""
    for r in rest:
        if "=" in r and not r.startswith("--"):
            args.input.append(r)
        else:
            parser.error(f"unknown argument {r}")


def load_feeds(specs):
    """{NAME: array} from NAME=FILE.npy specs."""
    feeds = {}
    for spec in specs:
        name, path = spec.split("=", 1)
        feeds[name] = np.load(path, allow_pickle=False)
    return feeds
