"""The Textual monitor: watch and steer a running team, or replay a recorded one."""

from terrarium.tui.app import MonitorApp
from terrarium.tui.human import MonitorHuman
from terrarium.tui.launch import monitor_replay, run_monitor, run_team_with_monitor
from terrarium.tui.replay import ReplayHandle

__all__ = ["MonitorApp", "MonitorHuman", "ReplayHandle", "monitor_replay", "run_monitor",
           "run_team_with_monitor"]
