import { ConfigError } from '../errors';
import { CALIBRATIONS, resolveCalibration } from './calibrations';
import { DEFAULT_CALIBRATION } from './confidence';

describe('resolveCalibration, the one home of the gate configuration', () => {
  const table = {
    'm/calibrated': { cosineWeight: 0.25, evidenceFloor: 0.37, medium: 0.4, high: 0.6 },
  };

  it("takes the model's own calibration, else the uncalibrated defaults", () => {
    expect(resolveCalibration('m/calibrated', {}, table)).toEqual(table['m/calibrated']);
    expect(resolveCalibration('m/other', {}, table)).toEqual(DEFAULT_CALIBRATION);
    expect(resolveCalibration('local/use-lite-512')).toEqual(CALIBRATIONS['local/use-lite-512']);
  });

  it('lays only the values a deployment sets over it', () => {
    expect(resolveCalibration('m/calibrated', { high: 0.7, medium: undefined }, table)).toEqual({
      cosineWeight: 0.25,
      evidenceFloor: 0.37,
      medium: 0.4,
      high: 0.7,
    });
  });

  it('refuses a medium above high, whichever side set it', () => {
    expect(() => resolveCalibration('m/calibrated', { medium: 0.65 }, table)).toThrow(ConfigError);
    expect(() => resolveCalibration('m/other', { high: 0.3 }, table)).toThrow(
      /medium \(0.4\) must not exceed high \(0.3\)/,
    );
  });
});
