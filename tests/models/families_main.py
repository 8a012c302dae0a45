"""The command line of the scripts that write test model families (make_image_models.py,
make_st_image_models.py, make_retrieval_models.py): each family into its own folder under
--out, all of them or those --only names."""
import argparse
import os
import sys


def main(doc, out, families):
    """Parses the command line (`doc`'s first paragraph as its description, `out` the default
    folder) and calls families[name](folder) for each family asked for."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--out", default=out, help="folder of the model folders (default: %(default)s)")
    ap.add_argument("--only", nargs="+", choices=sorted(families), help="these families only")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.only or families:
        families[name](os.path.join(args.out, name))
        print("wrote", os.path.join(args.out, name), file=sys.stderr)
