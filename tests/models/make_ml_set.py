"""The traditional-ML set: scikit-learn models and pipelines trained on
synthetic data (fixed seeds), converted by skl2onnx as users convert them
(classifiers with skl2onnx's default ZipMap output, and without it), with the
outputs ONNX Runtime and scikit-learn give on a held-out batch.
tests/python/test_ml_set.py compares dlrt with both.

usage: make_ml_set.py OUT_DIR
Writes OUT_DIR/<case>.onnx and OUT_DIR/<case>.pkl ({"inputs": {name: array or
dict}, "ort": [output values as onnxruntime returns them], "sklearn": {"label":
..., "proba": ..., "value": ...}}), then OUT_DIR/manifest.json and STAMP.
"""
import json
import os
import pickle
import sys

import numpy as np
import onnxruntime as ort
import skl2onnx
import sklearn
from skl2onnx import convert_sklearn, to_onnx
from skl2onnx.common.data_types import DictionaryType, FloatTensorType, Int64TensorType, StringTensorType
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import (GradientBoostingClassifier, GradientBoostingRegressor, RandomForestClassifier,
                              RandomForestRegressor)
from sklearn.feature_extraction import DictVectorizer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (Binarizer, MinMaxScaler, Normalizer, OneHotEncoder, StandardScaler)
from sklearn.svm import SVC, SVR, LinearSVC, OneClassSVM
from sklearn.tree import DecisionTreeClassifier

OPSET = {"": 17, "ai.onnx.ml": 3}


def no_zipmap(model):
    return {id(model): {"zipmap": False}}


def classification(seed, classes, n=260, features=6):
    x, y = make_classification(n_samples=n, n_features=features, n_informative=4, n_redundant=1, n_classes=classes,
                               n_clusters_per_class=1, random_state=seed)
    return x.astype(np.float32), y


def regression(seed, n=240, features=5):
    x, y = make_regression(n_samples=n, n_features=features, noise=3.0, random_state=seed)
    return x.astype(np.float32), y.astype(np.float32)


def cases():
    """(name, fitted model, onnx model, {input: batch}, sklearn outputs)."""
    out = []

    def classifier(name, model, x, y, options=None, labels=None):
        y_fit = y if labels is None else np.asarray(labels)[y]
        model.fit(x[:200], y_fit[:200])
        onx = to_onnx(model, x[:1], target_opset=OPSET, options=options)
        batch = x[200:232]
        sk = {"label": model.predict(batch)}
        if hasattr(model, "predict_proba") and (not hasattr(model, "probability") or model.probability):
            sk["proba"] = model.predict_proba(batch)
        out.append((name, onx, {onx.graph.input[0].name: batch}, sk))

    def regressor(name, model, x, y):
        model.fit(x[:200], y[:200])
        onx = to_onnx(model, x[:1], target_opset=OPSET)
        batch = x[200:232]
        out.append((name, onx, {onx.graph.input[0].name: batch}, {"value": model.predict(batch)}))

    x2, y2 = classification(1, 2)
    x3, y3 = classification(2, 3)
    xr, yr = regression(3)
    classifier("logistic_binary_zipmap", LogisticRegression(max_iter=500), x2, y2)
    classifier("logistic_3class_string_labels_zipmap", make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)),
               x3, y3, labels=["cat", "dog", "fish"])
    m = make_pipeline(StandardScaler(), SVC(kernel="rbf", probability=True, random_state=0))
    classifier("scaler_svc_rbf_3class", m, x3, y3, options=no_zipmap(m))
    m = SVC(kernel="linear")
    classifier("svc_linear_binary", m, x2, y2, options=no_zipmap(m))
    regressor("svr_poly", make_pipeline(MinMaxScaler(), SVR(kernel="poly", degree=2, C=10.0)), xr, yr)
    classifier("random_forest_3class_zipmap", RandomForestClassifier(n_estimators=12, max_depth=6, random_state=0), x3, y3)
    m = GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0)
    classifier("gradient_boosting_binary", m, x2, y2, options=no_zipmap(m))
    m = DecisionTreeClassifier(max_depth=5, random_state=0)
    classifier("decision_tree_3class_int_labels", m, x3, y3, options=no_zipmap(m), labels=[10, 20, 30])
    regressor("random_forest_regressor", RandomForestRegressor(n_estimators=10, max_depth=6, random_state=0), xr, yr)
    regressor("gradient_boosting_regressor", GradientBoostingRegressor(n_estimators=25, random_state=0), xr, yr)
    regressor("minmax_ridge", make_pipeline(MinMaxScaler(), Ridge(alpha=0.5)), xr, yr)
    classifier("linear_svc_3class", LinearSVC(random_state=0), x3, y3)
    m = make_pipeline(Normalizer(), LogisticRegression(max_iter=500))
    classifier("normalizer_logistic_3class", m, x3, y3, options=no_zipmap(m.steps[-1][1]))
    classifier("mlp_3class_zipmap", MLPClassifier(hidden_layer_sizes=(16,), max_iter=400, random_state=0), x3, y3)
    m = KNeighborsClassifier(n_neighbors=5)
    classifier("knn_3class", m, x3, y3, options=no_zipmap(m))
    m = make_pipeline(Binarizer(threshold=0.1), LogisticRegression(max_iter=500))
    classifier("binarizer_logistic_binary", m, x2, y2, options=no_zipmap(m.steps[-1][1]))

    # OneClassSVM: decision function and the +1/-1 label.
    m = OneClassSVM(nu=0.2, gamma="scale").fit(x2[:200])
    onx = to_onnx(m, x2[:1], target_opset=OPSET)
    batch = x2[200:232]
    out.append(("one_class_svm", onx, {onx.graph.input[0].name: batch},
                {"label": m.predict(batch), "value": m.decision_function(batch)}))

    # Mixed columns: imputed, scaled numbers and one-hot strings, then a classifier.
    rng = np.random.default_rng(4)
    num = rng.standard_normal((260, 3)).astype(np.float32)
    num[rng.random((260, 3)) < 0.1] = np.nan
    cat = rng.choice(["red", "green", "blue", "violet"], size=(260, 1))
    target = ((np.nan_to_num(num[:, 0]) > 0) ^ (cat[:, 0] == "red")).astype(np.int64)
    pre = ColumnTransformer([("num", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), [0, 1, 2]),
                             ("cat", OneHotEncoder(handle_unknown="ignore"), [3])])
    import pandas as pd  # (skl2onnx maps named columns to inputs)
    frame = pd.DataFrame({"a": num[:, 0], "b": num[:, 1], "c": num[:, 2], "colour": cat[:, 0]})
    pre = ColumnTransformer([("num", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), ["a", "b", "c"]),
                             ("cat", OneHotEncoder(handle_unknown="ignore"), ["colour"])])
    model = make_pipeline(pre, LogisticRegression(max_iter=500)).fit(frame[:200], target[:200])
    types = [("a", FloatTensorType([None, 1])), ("b", FloatTensorType([None, 1])), ("c", FloatTensorType([None, 1])),
             ("colour", StringTensorType([None, 1]))]
    onx = convert_sklearn(model, initial_types=types, target_opset=OPSET)
    test = frame[200:232]
    feeds = {"a": num[200:232, 0:1], "b": num[200:232, 1:2], "c": num[200:232, 2:3], "colour": cat[200:232]}
    out.append(("column_transformer_impute_onehot_logistic", onx, feeds,
                {"label": model.predict(test), "proba": model.predict_proba(test)}))

    # A dict of features (DictVectorizer) -> linear regression; one map per run.
    words = ["alpha", "beta", "gamma", "delta", "eps"]
    dicts = [{w: float(v) for w, v in zip(words, row) if v > -0.5} for row in rng.standard_normal((120, 5))]
    yd = np.array([sum(d.values()) * 2 + d.get("beta", 0) for d in dicts], np.float32)
    model = make_pipeline(DictVectorizer(sparse=False), LinearRegression()).fit(dicts, yd)
    onx = convert_sklearn(model, initial_types=[("features", DictionaryType(StringTensorType([1]),
                                                                            FloatTensorType([1])))],
                          target_opset=OPSET)
    one = {"alpha": 0.25, "gamma": -1.5, "eps": 2.0, "unknown_word": 7.0}
    out.append(("dict_vectorizer_linear_regression", onx, {"features": one}, {"value": model.predict([one])}))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    manifest = []
    for name, onx, feeds, sk in cases():
        path = os.path.join(out_dir, name + ".onnx")
        with open(path, "wb") as f:
            f.write(onx.SerializeToString())
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        got = sess.run(None, feeds)
        with open(os.path.join(out_dir, name + ".pkl"), "wb") as f:
            pickle.dump({"inputs": feeds, "ort": got, "sklearn": sk,
                         "outputs": [o.name for o in sess.get_outputs()],
                         "types": [o.type for o in sess.get_outputs()]}, f, protocol=4)
        ops = sorted({f"{n.domain or 'ai.onnx'}:{n.op_type}" for n in onx.graph.node})
        manifest.append({"name": name, "ops": ops})
        print(f"{name}: {', '.join(ops)}")
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    with open(os.path.join(out_dir, "STAMP"), "w") as f:
        f.write(f"scikit-learn {sklearn.__version__}, skl2onnx {skl2onnx.__version__}, onnxruntime {ort.__version__}: "
                f"{len(manifest)} cases\n")


if __name__ == "__main__":
    main()
