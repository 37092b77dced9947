//! Whole messages printed and compared with what ovs-ofctl 3.1 printed for the same
//! replies from Open vSwitch 3.1 (captured from a real switch).
