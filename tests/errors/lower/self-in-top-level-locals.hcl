locals {
  n = self.name
}
