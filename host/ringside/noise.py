# SPDX-License-Identifier: MIT
"""Whether a difference between two sets of samples is beyond the noise.

ratio(a, b): B/A of the means with a 95 % confidence interval (Welch's t
on the relative errors, the delta method for a ratio), and a verdict for
a metric where lower or higher is better: better, worse, or no change
beyond the noise. One sample on a side gives the ratio and no interval:
`--rounds N` gives a cell N samples.
"""

import math
import statistics

# Student's t, two-sided 95 %, by degrees of freedom
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
       17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000,
       120: 1.980}


def t95(df):
    """The 97.5th percentile of Student's t with `df` degrees of freedom
    (the table's next smaller entry: never narrower than the truth)."""
    if df >= 1000:
        return 1.960
    return T95[max(k for k in T95 if k <= max(1, int(df)))]


def ratio(a, b):
    """{'ratio', 'low', 'high', 'n_a', 'n_b'} for mean(b) / mean(a); low
    and high are None without two samples a side (or a zero mean)."""
    a, b = [float(x) for x in a], [float(x) for x in b]
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    out = {'ratio': mb / ma if ma else None, 'low': None, 'high': None,
           'n_a': len(a), 'n_b': len(b)}
    if len(a) < 2 or len(b) < 2 or not ma or not mb:
        return out
    # relative variances of each mean, their sum that of log(ratio)
    va = statistics.variance(a) / (len(a) * ma * ma)
    vb = statistics.variance(b) / (len(b) * mb * mb)
    se = math.sqrt(va + vb)
    if se == 0:
        out['low'] = out['high'] = out['ratio']
        return out
    df = (va + vb) ** 2 / ((va * va / (len(a) - 1) if va else 0)
                           + (vb * vb / (len(b) - 1) if vb else 0))
    half = t95(df) * se
    out['low'], out['high'] = out['ratio'] * math.exp(-half), out['ratio'] * math.exp(half)
    return out


def verdict(r, better):
    """'better', 'worse', 'no change' (the interval holds 1) or '?' (no
    interval), for a metric where `better` is 'lower' or 'higher' (None:
    'up' or 'down', no judgement)."""
    if r['low'] is None:
        return '?'
    if r['low'] <= 1 <= r['high']:
        return 'no change'
    up = r['low'] > 1
    if better is None:
        return 'up' if up else 'down'
    return 'better' if up == (better == 'higher') else 'worse'
