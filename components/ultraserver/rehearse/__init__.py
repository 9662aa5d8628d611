"""``ultraserver rehearse``: the stack's cluster served by an emulated Kubernetes API on the loopback address, the
unchanged day-2 code run against it through a kubeconfig, and faults from a catalogue injected on purpose.

The emulator (kmock, the ``rehearse`` extra) stores and serves objects; it has no scheduler, admission, webhooks or
controllers. The rehearsal plays the parts a real cluster's controllers and kubelets would (nodes registering,
plugin pods running, the check jobs' launchers finishing with their logs), from the stack's plan.
"""
