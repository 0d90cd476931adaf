"""Sofa.SofaDeformable: the spring value type of SOFA's spring force fields (LinearSpring); the
force fields' getSprings/addSpring(s)/removeSpring(s)/clear are methods of their objects."""


class LinearSpring:
    """One spring between point `index1` of the first state and `index2` of the second."""

    def __init__(self, index1=0, index2=0, springStiffness=0.0, dampingFactor=0.0, restLength=0.0,
                 elongationOnly=False, enabled=True):
        self.index1 = int(index1)
        self.index2 = int(index2)
        self.springStiffness = float(springStiffness)
        self.dampingFactor = float(dampingFactor)
        self.restLength = float(restLength)
        self.elongationOnly = bool(elongationOnly)
        self.enabled = bool(enabled)

    def __repr__(self):
        return "LinearSpring(%d, %d, ks=%g, kd=%g, l0=%g%s%s)" % (
            self.index1, self.index2, self.springStiffness, self.dampingFactor, self.restLength,
            ", elongationOnly" if self.elongationOnly else "", "" if self.enabled else ", disabled")
