"""An adapter that returns malformed rules: not a Rule at all for np.sin, and for np.cos a
rule whose pullback returns a cotangent of the wrong shape."""

import numpy as np

import rulebridge
from rulebridge import Declined, Rule


class MalformedAdapter(rulebridge.Adapter):
    name = "malformed"

    def functions(self):
        return [np.sin, np.cos]

    def build_rule(self, function, signature):
        if function is np.sin:
            return ("forward", "pullback")
        if function is np.cos:
            return Rule(function, signature, lambda args, kwargs: (np.cos(*args), args[0]),
                        lambda x, g, argnums: (np.zeros(np.shape(x) + (2,)),), source=self.name)
        raise Declined("malformed covers sin and cos only")
