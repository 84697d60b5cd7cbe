"""Reference for src/experiments/boost.c: scikit-learn's
AdaBoostClassifier(algorithm="SAMME") with a fixed base learner, a decision
stump (DecisionTreeClassifier(max_depth=1)), on the test's fixture. The
stump records the sample weights each round is fit with, so the test can
check its own weights round by round, from the same rounds' predictions.
Inputs x (N, 2) and y (N) (classes 0..K-1 as floats); outputs
preds (R, N) each round's predictions on x, weights (R, N) the sample weights
it was fit with, errors (R), alphas (R) (estimator_errors_, estimator_weights_),
final (N) the ensemble's predictions, rounds (1) how many rounds were kept
(rows past it are 0). Exit 77 (test skipped) without scikit-learn.
usage: samme_ref.py DIR N K R"""
import os
import sys

try:
    import numpy as np
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier
except ImportError:
    sys.exit(77)

FITS = []


class RecordingStump(DecisionTreeClassifier):
    """A decision stump that keeps the sample weights it is fit with."""

    def fit(self, X, y, sample_weight=None, check_input=True):
        FITS.append(np.array(sample_weight, dtype=np.float64))
        return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)


def load(d, name, shape):
    return np.fromfile(os.path.join(d, name + ".f32"), dtype="<f4").reshape(shape).astype(np.float64)


def save(d, name, a):
    np.asarray(a, dtype=np.float64).astype("<f4").tofile(os.path.join(d, name + ".f32"))


d = sys.argv[1]
N, K, R = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
x = load(d, "x", (N, 2))
y = load(d, "y", (N,)).astype(int)
try:
    ada = AdaBoostClassifier(estimator=RecordingStump(max_depth=1, random_state=0), n_estimators=R,
                             algorithm="SAMME", random_state=0)
except TypeError:   # before 1.2 the argument was base_estimator
    ada = AdaBoostClassifier(base_estimator=RecordingStump(max_depth=1, random_state=0), n_estimators=R,
                             algorithm="SAMME", random_state=0)
ada.fit(x, y)
kept = len(ada.estimators_)
preds, weights = np.zeros((R, N)), np.zeros((R, N))
for k in range(kept):
    preds[k] = ada.estimators_[k].predict(x)
    weights[k] = FITS[k] / FITS[k].sum()
save(d, "preds", preds)
save(d, "weights", weights)
save(d, "errors", np.asarray(ada.estimator_errors_)[:R])
save(d, "alphas", np.asarray(ada.estimator_weights_)[:R])
save(d, "final", ada.predict(x))
save(d, "rounds", [kept])
