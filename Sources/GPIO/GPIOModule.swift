public enum GPIOModule {}
