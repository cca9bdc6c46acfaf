#!/usr/bin/python3
"""A desktop panel's tray, as far as a tray icon can tell: the
StatusNotifierWatcher (org.kde.StatusNotifierWatcher, the protocol KDE,
GNOME's AppIndicator extension and most panels speak), on the e2e tests'
private D-Bus session, with a host registered. Every item that registers is
written to the file named on the command line, one "BUS_NAME OBJECT_PATH"
line each, so a test can read the item's label and menu over D-Bus (gdbus)
the way a panel shows them.

Run by tests/e2e.sh with Debian's python3-gi; prints nothing, serves until
killed.
"""

import sys

from gi.repository import Gio, GLib

WATCHER = "org.kde.StatusNotifierWatcher"
PATH = "/StatusNotifierWatcher"
XML = """
<node>
  <interface name="org.kde.StatusNotifierWatcher">
    <method name="RegisterStatusNotifierItem"><arg name="service" type="s" direction="in"/></method>
    <method name="RegisterStatusNotifierHost"><arg name="service" type="s" direction="in"/></method>
    <property name="RegisteredStatusNotifierItems" type="as" access="read"/>
    <property name="IsStatusNotifierHostRegistered" type="b" access="read"/>
    <property name="ProtocolVersion" type="i" access="read"/>
    <signal name="StatusNotifierItemRegistered"><arg type="s"/></signal>
    <signal name="StatusNotifierItemUnregistered"><arg type="s"/></signal>
    <signal name="StatusNotifierHostRegistered"/>
  </interface>
</node>
"""

items = []


def record(path):
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        for item in items:
            out.write(item + "\n")


def on_call(connection, sender, _path, _interface, method, params, invocation):
    if method == "RegisterStatusNotifierItem":
        (service,) = params.unpack()
        # An item names either its object path (its bus name is the sender)
        # or a bus name (its path is the protocol's default).
        if service.startswith("/"):
            item = f"{sender} {service}"
        else:
            item = f"{service} /StatusNotifierItem"
        if item not in items:
            items.append(item)
            record(sys.argv[1])
        connection.emit_signal(
            None,
            PATH,
            WATCHER,
            "StatusNotifierItemRegistered",
            GLib.Variant("(s)", (item.replace(" ", ""),)),
        )
    invocation.return_value(None)


def on_property(_connection, _sender, _path, _interface, name):
    if name == "RegisteredStatusNotifierItems":
        # As KDE writes them: the bus name and the object path, run together.
        return GLib.Variant("as", [item.replace(" ", "") for item in items])
    if name == "IsStatusNotifierHostRegistered":
        return GLib.Variant("b", True)
    if name == "ProtocolVersion":
        return GLib.Variant("i", 0)
    return None


def main():
    if len(sys.argv) != 2:
        print("usage: tray-host.py FILE", file=sys.stderr)
        return 2
    record(sys.argv[1])
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    node = Gio.DBusNodeInfo.new_for_xml(XML)
    bus.register_object(PATH, node.interfaces[0], on_call, on_property, None)
    Gio.bus_own_name_on_connection(bus, WATCHER, Gio.BusNameOwnerFlags.NONE, None, None)
    GLib.MainLoop().run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
