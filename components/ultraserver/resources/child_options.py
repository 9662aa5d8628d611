"""Resource options for the children of a component that must honour the component's own depends_on."""

from __future__ import annotations

import pulumi


def child_options(
    parent: pulumi.Resource, opts: pulumi.ResourceOptions | None, extra: pulumi.ResourceOptions | None = None
) -> pulumi.ResourceOptions:
    """Options parenting a child to `parent`, repeating `opts.depends_on` on it, plus `extra` (merged).

    Pulumi does not pass a component's depends_on down to its children, so a child would otherwise start as
    soon as its parent is registered, before what the component was told to wait for.
    """
    inherited = pulumi.ResourceOptions(parent=parent, depends_on=opts.depends_on if opts else None)
    return pulumi.ResourceOptions.merge(inherited, extra) if extra else inherited
