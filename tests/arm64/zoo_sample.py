"""zoo_sample.py ZOO OUT MODEL/CASE... | all: OUT laid out as ZOO (the zoo test's layout) with only
the named cases: a manifest.json of those cases, and links to ZOO's model files and case folders.
Exit status 2 when a named model or case is not in ZOO's manifest."""
import json
import os
import shutil
import sys

zoo, out, picks = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
manifest = json.load(open(os.path.join(zoo, "manifest.json")))
models = manifest["models"]
if picks == ["all"]:
    picks = [f"{m}/{c}" for m in models for c in models[m]["cases"]]
keep = {}
for p in picks:
    model, _, case = p.partition("/")
    if model not in models or case not in models[model]["cases"]:
        sys.exit(f"zoo_sample: {p} is not a model/case of {zoo}/manifest.json")
    keep.setdefault(model, []).append(case)
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
sample = dict(manifest, models={})
for model, cases in keep.items():
    entry = dict(models[model], cases={c: models[model]["cases"][c] for c in cases})
    sample["models"][model] = entry
    os.symlink(os.path.join(zoo, entry["file"]), os.path.join(out, entry["file"]))
    os.symlink(os.path.join(zoo, model), os.path.join(out, model))
with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump(sample, f, indent=1)
print(f"zoo sample: {sum(len(c) for c in keep.values())} cases of {len(keep)} models in {out}")
