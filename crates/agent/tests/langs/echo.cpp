// A C++ bot for the sandbox language test: READY, then echo every line.
#include <iostream>
#include <string>
int main() {
    std::cout << "READY" << std::endl;
    std::string line;
    while (std::getline(std::cin, line)) std::cout << "ECHO " << line << std::endl;
}
